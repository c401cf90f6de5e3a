#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The encoding a text file was found to be in.
public enum TextEncoding: String, Sendable, Codable {
    case utf8 = "utf-8"
    case utf8BOM = "utf-8-bom"
    case utf16LE = "utf-16le"
    case utf16BE = "utf-16be"
    case gb18030 = "gb18030"
}

/// Text decoded to UTF-8 bytes (BOM removed), with the encoding it was found in.
public struct DecodedText: Sendable {
    public var utf8: [UInt8]
    public var encoding: TextEncoding

    public init(utf8: [UInt8], encoding: TextEncoding) {
        self.utf8 = utf8
        self.encoding = encoding
    }
}

public enum TextDecodingError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are not UTF-8, UTF-16 with BOM, or GB18030. `byteOffset` is the first bad byte.
    case undecodable(byteOffset: Int, detail: String)

    public var description: String {
        switch self {
        case let .undecodable(offset, detail):
            return "byte offset \(offset): \(detail)"
        }
    }
}

/// Decodes lyric text: UTF-8 with or without BOM, UTF-16 with BOM; anything else is tried as
/// GB18030 (the usual legacy encoding of Chinese lyric files), which the caller should warn about.
/// UTF-32 is refused by name.
public enum TextDecoder {
    /// `UTF-32LE`, `UTF-32BE` (with what says so) when the bytes are UTF-32 text: its byte-order
    /// mark, or a first character of one byte and three NULs (an ASCII character, in UTF-32).
    static func utf32(_ b: [UInt8]) -> String? {
        guard b.count >= 4 else { return nil }
        if b[0] == 0xFF, b[1] == 0xFE, b[2] == 0, b[3] == 0 { return "UTF-32LE (its byte-order mark)" }
        if b[0] == 0, b[1] == 0, b[2] == 0xFE, b[3] == 0xFF { return "UTF-32BE (its byte-order mark)" }
        if b[0] != 0, b[1] == 0, b[2] == 0, b[3] == 0 { return "UTF-32LE (a character and three NUL bytes)" }
        if b[0] == 0, b[1] == 0, b[2] == 0, b[3] != 0 { return "UTF-32BE (three NUL bytes and a character)" }
        return nil
    }

    public static func decode(_ bytes: [UInt8]) throws(TextDecodingError) -> DecodedText {
        // Before UTF-16: UTF-32LE's mark starts with UTF-16LE's, and without a mark its NULs are valid UTF-8.
        if let name = utf32(bytes) {
            throw TextDecodingError.undecodable(byteOffset: 0, detail: "the text is \(name), which ktv does not read; re-save the file as UTF-8")
        }
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            let body = Array(bytes[3...])
            if let bad = firstInvalidUTF8(body) {
                throw TextDecodingError.undecodable(
                    byteOffset: bad + 3,
                    detail: "invalid UTF-8 after a UTF-8 byte-order mark; re-save the file as UTF-8")
            }
            return DecodedText(utf8: body, encoding: .utf8BOM)
        }
        if bytes.count >= 2, (bytes[0] == 0xFF && bytes[1] == 0xFE) || (bytes[0] == 0xFE && bytes[1] == 0xFF) {
            let little = bytes[0] == 0xFF
            let name = little ? "UTF-16LE" : "UTF-16BE"
            let body = Array(bytes[2...])
            switch convert(body, from: name) {
            case let .success(out):
                return DecodedText(utf8: out, encoding: little ? .utf16LE : .utf16BE)
            case let .failure(offset):
                throw TextDecodingError.undecodable(
                    byteOffset: offset + 2,
                    detail: "invalid \(name) after a UTF-16 byte-order mark (odd length or unpaired surrogate)")
            }
        }
        let badUTF8 = firstInvalidUTF8(bytes)
        guard let badUTF8 else { return DecodedText(utf8: bytes, encoding: .utf8) }
        if let nul = bytes.firstIndex(of: 0) {
            throw TextDecodingError.undecodable(
                byteOffset: nul,
                detail: "binary data (a NUL byte), not text; expected UTF-8, UTF-16 with BOM or GB18030 lyrics")
        }
        switch convert(bytes, from: "GB18030") {
        case let .success(out):
            return DecodedText(utf8: out, encoding: .gb18030)
        case let .failure(offset):
            throw TextDecodingError.undecodable(
                byteOffset: badUTF8,
                detail: "not valid UTF-8 (first bad byte 0x\(hex(bytes[badUTF8]))) and not GB18030 either (fails at byte offset \(offset)); re-save the file as UTF-8")
        }
    }

    /// `bytes` (no BOM) as UTF-8, converted from a legacy code page that iconv names (`CP1252`,
    /// `CP1250`): what old UltraStar songs and MIDI lyrics are written in. When iconv does not know
    /// the name or a byte has no character in it (CP1252 leaves five unassigned), the text is read
    /// as Latin-1, which maps every byte: legacy text is shown, never refused.
    public static func decode(_ bytes: [UInt8], codePage: String) -> [UInt8] {
        if case let .success(out) = convert(bytes, from: codePage) { return out }
        return Array(String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) })).utf8)
    }

    /// The offset of the first byte that is not part of a well-formed UTF-8 sequence, or nil.
    public static func firstInvalidUTF8(_ b: [UInt8]) -> Int? {
        var i = 0
        let n = b.count
        while i < n {
            // Eight ASCII bytes at a time: lyric text is mostly ASCII (tags, times, Latin words).
            if i + 8 <= n {
                let word = b.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: i, as: UInt64.self) }
                if word & 0x8080_8080_8080_8080 == 0 { i += 8; continue }
            }
            let c = b[i]
            if c < 0x80 { i += 1; continue }
            var need = 0
            var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; hi = 0x9F
            case 0xF0: need = 3; lo = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; hi = 0x8F
            default: return i
            }
            for k in 1...need {
                if i + k >= n { return i }
                let d = b[i + k]
                if k == 1 {
                    if d < lo || d > hi { return i }
                } else if d < 0x80 || d > 0xBF {
                    return i
                }
            }
            i += need + 1
        }
        return nil
    }

    private enum Conversion { case success([UInt8]), failure(Int) }

    private static func convert(_ input: [UInt8], from encoding: String) -> Conversion {
        if input.isEmpty { return .success([]) }
        let cd = iconv_open("UTF-8", encoding)
        if cd == iconv_t(bitPattern: -1) { return .failure(0) }
        defer { iconv_close(cd) }
        var output = [UInt8](repeating: 0, count: input.count * 4 + 16)
        var inLeft = input.count
        var outLeft = output.count
        var src = input.map { CChar(bitPattern: $0) }
        let result: Int = src.withUnsafeMutableBufferPointer { inBuf in
            output.withUnsafeMutableBytes { outRaw in
                var inPtr: UnsafeMutablePointer<CChar>? = inBuf.baseAddress
                var outPtr: UnsafeMutablePointer<CChar>? = outRaw.baseAddress!.assumingMemoryBound(to: CChar.self)
                return iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft)
            }
        }
        if result == -1 || inLeft != 0 {
            return .failure(input.count - inLeft)
        }
        output.removeLast(outLeft)
        return .success(output)
    }

    private static func hex(_ b: UInt8) -> String {
        let s = String(b, radix: 16, uppercase: true)
        return s.count == 1 ? "0" + s : s
    }
}
