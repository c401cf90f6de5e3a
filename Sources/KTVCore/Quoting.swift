/// Input quoted in a message, in backticks, cut to `limit` characters: a 50 MB bad token must not
/// become a 50 MB error message. Control characters are shown escaped so a message stays one line.
public func quoted<S: StringProtocol>(_ text: S, limit: Int = 80) -> String {
    var out = "`"
    var count = 0
    for ch in text {
        if count == limit { out += "…"; break }
        switch ch {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if let a = ch.asciiValue, a < 0x20 || a == 0x7F {
                out += "\\u{\(String(a, radix: 16))}"
            } else {
                out.append(ch)
            }
        }
        count += 1
    }
    return out + "`"
}

/// `text` with its control characters (C0, DEL, C1: a NUL, an escape sequence) written as `\n`,
/// `\r`, `\t` or `\u{…}`, so a message quoting input stays one line and shows what is there.
public func escapingControlCharacters<S: StringProtocol>(_ text: S) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.properties.generalCategory == .control {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

/// `s` with `&`, `<`, `>` and `"` escaped for XML text and attribute values (SVG reports).
public func xmlEscaped(_ s: String) -> String {
    var o = ""
    for c in s {
        switch c {
        case "&": o += "&amp;"
        case "<": o += "&lt;"
        case ">": o += "&gt;"
        case "\"": o += "&quot;"
        default: o.append(c)
        }
    }
    return o
}
