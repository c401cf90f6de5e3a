/// A JSON value with ordered object keys, for deterministic, diff-friendly output.
///
/// `JSONEncoder` does not promise key order on every platform; reports and models are read by
/// people and by diff tools, so ktv writes JSON through this small value type.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// Serializes with two-space indentation (`pretty`) or on one line.
    public func serialized(pretty: Bool = true) -> String {
        var out = ""
        write(into: &out, indent: pretty ? 0 : -1)
        if pretty { out += "\n" }
        return out
    }

    private func write(into out: inout String, indent: Int) {
        let pretty = indent >= 0
        switch self {
        case .null: out += "null"
        case let .bool(v): out += v ? "true" : "false"
        case let .int(v): out += String(v)
        case let .double(v):
            if v.isFinite {
                if v == v.rounded(), abs(v) < 1e15 { out += String(Int(v)) } else { out += String(v) }
            } else {
                out += "null"
            }
        case let .string(s): Self.escape(s, into: &out)
        case let .array(items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (k, item) in items.enumerated() {
                if k > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(into: &out, indent: pretty ? indent + 1 : -1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case let .object(pairs):
            if pairs.isEmpty { out += "{}"; return }
            out += "{"
            for (k, pair) in pairs.enumerated() {
                if k > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                Self.escape(pair.0, into: &out)
                out += pretty ? ": " : ":"
                pair.1.write(into: &out, indent: pretty ? indent + 1 : -1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    public static func escape(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            // Foundation's JSONSerialization on Linux drops a raw U+FEFF that starts a string (taken
            // for a byte-order mark), so ktv's own JSON did not read back; escaped, it survives.
            case "\u{FEFF}": out += "\\ufeff"
            default:
                if u.value < 0x20 {
                    let h = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        out += "\""
    }
}
