import CZlib

/// Kugou's `krc1` container: the 4-byte magic `krc1`, then a zlib stream XORed with a 16-byte key
/// whose index counts from the first byte after the magic. zlib headers vary (`78 9C`, `78 01`),
/// so only the magic is checked. See `shared/lyrics/FORMATS.md` §1.1.
public enum KRCContainer {
    public static let magic: [UInt8] = Array("krc1".utf8)
    /// Latin-1 bytes, not the UTF-8 encoding of `@Gaw^2tGQ61-ÎÒni` (a common mistake).
    public static let key: [UInt8] = [0x40, 0x47, 0x61, 0x77, 0x5E, 0x32, 0x74, 0x47,
                                      0x51, 0x36, 0x31, 0x2D, 0xCE, 0xD2, 0x6E, 0x69]

    public static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && Array(bytes[0..<4]) == magic
    }

    /// The exact plaintext bytes inside an encrypted KRC.
    public static func decrypt(_ bytes: [UInt8]) throws(LyricsError) -> [UInt8] {
        guard isEncrypted(bytes) else {
            throw .badContainer(byteOffset: 0, detail: "not an encrypted KRC: the file does not start with the magic `krc1`")
        }
        guard bytes.count > 4 else {
            throw .badContainer(byteOffset: 4, detail: "encrypted KRC has no payload after the `krc1` magic (truncated file)")
        }
        var payload = [UInt8](bytes[4...])
        xor(&payload)
        return try inflate(payload)
    }

    /// Encrypts plaintext into a `krc1` file that other decoders accept (zlib stream, same key).
    public static func encrypt(_ plaintext: [UInt8]) throws(LyricsError) -> [UInt8] {
        var compressed = try deflate(plaintext)
        xor(&compressed)
        return magic + compressed
    }

    private static func xor(_ data: inout [UInt8]) {
        data.withUnsafeMutableBufferPointer { p in
            for i in 0..<p.count { p[i] ^= key[i & 15] }
        }
    }

    private static func inflate(_ input: [UInt8]) throws(LyricsError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .badContainer(byteOffset: nil, detail: "zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 4)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        var status: Int32 = Z_OK
        let total = input.count
        input.withUnsafeMutableBufferPointer { inBuf in
            stream.next_in = inBuf.baseAddress
            stream.avail_in = uInt(inBuf.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { outBuf in
                    stream.next_out = outBuf.baseAddress
                    stream.avail_out = uInt(outBuf.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    let produced = outBuf.count - Int(stream.avail_out)
                    output.append(contentsOf: outBuf[0..<produced])
                }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        if status != Z_STREAM_END {
            let consumed = total - Int(stream.avail_in)
            let why: String
            switch status {
            case Z_DATA_ERROR: why = "damaged compressed data"
            case Z_OK, Z_BUF_ERROR: why = "the compressed data ends early (truncated file)"
            case Z_MEM_ERROR: why = "out of memory"
            default: why = "zlib error \(status)"
            }
            throw .badContainer(byteOffset: 4 + consumed,
                                detail: "encrypted KRC payload does not decompress: \(why); the file is damaged or was not encrypted with the KRC key")
        }
        return output
    }

    private static func deflate(_ input: [UInt8]) throws(LyricsError) -> [UInt8] {
        var destLen = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(destLen))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { inp in
                compress2(out.baseAddress, &destLen, inp.baseAddress, uLong(inp.count), Z_BEST_COMPRESSION)
            }
        }
        guard status == Z_OK else {
            throw .cannotWrite(format: .krc, detail: "zlib compression failed (error \(status))")
        }
        output.removeLast(output.count - Int(destLen))
        return output
    }
}
