/// Looking at text as bytes: what telling a file's format needs, without making Strings. Foundation's
/// `String.contains` and `split` over a file's first 64 KB took 40 % of scoring a pitch-track take
/// and a third of validating a folder of lyrics; these read only what they must.
public enum ByteText {
    /// Whether `bytes` hold `needle`'s bytes.
    public static func contains(_ bytes: ArraySlice<UInt8>, _ needle: StaticString) -> Bool {
        needle.withUTF8Buffer { firstIndex(of: $0, in: bytes) } != nil
    }

    /// Where `needle`'s bytes first start in `bytes` (an index of `bytes`); nil when nowhere.
    public static func firstIndex(of needle: UnsafeBufferPointer<UInt8>, in bytes: ArraySlice<UInt8>) -> Int? {
        guard let first = needle.first else { return bytes.startIndex }
        guard bytes.count >= needle.count else { return nil }
        var i = bytes.startIndex
        let last = bytes.endIndex - needle.count
        while i <= last {
            if bytes[i] == first {
                var k = 1
                while k < needle.count, bytes[i + k] == needle[k] { k += 1 }
                if k == needle.count { return i }
            }
            i += 1
        }
        return nil
    }

    /// Calls `body` with each line of `bytes` that holds more than spaces and tabs, without its
    /// leading and trailing spaces and tabs (and a byte-order mark on a line's start), split on LF,
    /// CR or CRLF, until `body` returns false; the rest of the bytes is not looked at.
    public static func eachLine(_ bytes: ArraySlice<UInt8>, _ body: (ArraySlice<UInt8>) -> Bool) {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            var end = i
            while end < bytes.endIndex, bytes[end] != 0x0A, bytes[end] != 0x0D { end += 1 }
            var s = i, e = end
            if s + 2 < e, bytes[s] == 0xEF, bytes[s + 1] == 0xBB, bytes[s + 2] == 0xBF { s += 3 }
            while s < e, bytes[s] == 0x20 || bytes[s] == 0x09 { s += 1 }
            while e > s, bytes[e - 1] == 0x20 || bytes[e - 1] == 0x09 { e -= 1 }
            if s < e, !body(bytes[s..<e]) { return }
            i = end + 1
        }
    }

    /// The first `limit` lines `eachLine` gives, as Strings.
    public static func firstLines(_ bytes: ArraySlice<UInt8>, limit: Int) -> [String] {
        var lines: [String] = []
        guard limit > 0 else { return lines }
        eachLine(bytes) { line in
            lines.append(String(decoding: line, as: UTF8.self))
            return lines.count < limit
        }
        return lines
    }
}
