import CZlib

/// Kugou's `krc1` container: the 4-byte magic `krc1`, then a zlib stream XORed with a 16-byte key
/// whose index counts from the first byte after the magic. zlib headers vary (`78 9C`, `78 01`),
/// so only the magic is checked. See docs/lyric-formats.md §1.1.
public enum KRCContainer {
    public static let magic: [UInt8] = Array("krc1".utf8)
    /// Latin-1 bytes, not the UTF-8 encoding of `@Gaw^2tGQ61-ÎÒni` (a common mistake).
    public static let key: [UInt8] = [0x40, 0x47, 0x61, 0x77, 0x5E, 0x32, 0x74, 0x47,
                                      0x51, 0x36, 0x31, 0x2D, 0xCE, 0xD2, 0x6E, 0x69]

    public static func isEncrypted(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && Array(bytes[0..<4]) == magic
    }

    /// The exact plaintext bytes inside an encrypted KRC. Throws `.tooLarge` as soon as the
    /// plaintext passes `maxTextBytes` (a few kilobytes of zlib can expand to gigabytes).
    public static func decrypt(_ bytes: [UInt8],
                               maxTextBytes: Int = LyricsParseOptions.defaultMaxTextBytes) throws(LyricsError) -> [UInt8] {
        guard isEncrypted(bytes) else {
            throw .badContainer(byteOffset: 0, detail: "not an encrypted KRC: the file does not start with the magic `krc1`")
        }
        guard bytes.count > 4 else {
            throw .badContainer(byteOffset: 4, detail: "encrypted KRC has no payload after the `krc1` magic (truncated file)")
        }
        var plain: [UInt8] = []
        let payload = bytes.count - 4
        if payload <= maxTextBytes / 1032 {
            // Deflate expands at most 1032:1 (258 bytes from two 1-bit codes): this stream cannot
            // pass the limit, and is read in one pass (most KRC files are a few kilobytes).
            plain.reserveCapacity(payload * 4)
            _ = try inflate(bytes, limit: maxTextBytes) { plain.append(contentsOf: $0) }
        } else {
            // Two passes: the first only counts (and stops a bomb with one chunk of memory), the
            // second fills a buffer of the exact size, so a large text is never held twice.
            let size = try inflate(bytes, limit: maxTextBytes) { _ in }
            plain.reserveCapacity(size)
            _ = try inflate(bytes, limit: size) { plain.append(contentsOf: $0) }
        }
        return plain
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

    private static let chunk = 64 * 1024

    /// Inflates the payload of `file` (after the magic), XORing it a chunk at a time, and hands
    /// each piece of plaintext to `take`. Returns the plaintext size; stops past `limit`.
    private static func inflate(_ file: [UInt8], limit: Int,
                                _ take: (UnsafeBufferPointer<UInt8>) -> Void) throws(LyricsError) -> Int {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .badContainer(byteOffset: nil, detail: "zlib could not be initialised")
        }
        defer { inflateEnd(&stream) }
        let input = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunk)
        defer { input.deallocate() }
        let output = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunk)
        defer { output.deallocate() }
        let payload = file.count - 4
        var fed = 0, produced = 0
        var status: Int32 = Z_OK
        repeat {
            if stream.avail_in == 0, fed < payload {
                let n = min(chunk, payload - fed)
                file.withUnsafeBufferPointer { src in
                    for i in 0..<n { input[i] = src[4 + fed + i] ^ key[(fed + i) & 15] }
                }
                fed += n
                stream.next_in = input.baseAddress
                stream.avail_in = uInt(n)
            }
            stream.next_out = output.baseAddress
            stream.avail_out = uInt(chunk)
            status = CZlib.inflate(&stream, Z_NO_FLUSH)
            let piece = chunk - Int(stream.avail_out)
            produced += piece
            if produced > limit {
                let consumed = fed - Int(stream.avail_in)
                throw .tooLarge(limitBytes: limit,
                                detail: "byte offset \(4 + consumed) of the encrypted KRC: its text decompresses to more than \(limit) bytes")
            }
            take(UnsafeBufferPointer(rebasing: output[0..<piece]))
        } while status == Z_OK && (stream.avail_in > 0 || fed < payload || stream.avail_out == 0)
        if status != Z_STREAM_END {
            let consumed = fed - Int(stream.avail_in)
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
        return produced
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
