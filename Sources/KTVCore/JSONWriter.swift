/// A JSON value with ordered object keys, for deterministic, diff-friendly output.
///
/// `JSONEncoder` does not promise key order on every platform; reports and models are read by
/// people and by diff tools, so ktv writes JSON through this small value type. It is written
/// straight into UTF-8 bytes, whole (`serializedBytes`) or handed on in pieces (`write(pretty:to:)`);
/// a long list can be `generated`, each element made only when it is written, so neither the text
/// nor a tree of every value need be in memory at once.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// An array of `count` elements, element `k` made by `element(k)` when it is written (or read:
    /// `elements`). Written exactly as the `.array` of the same elements.
    case generated(count: Int, element: @Sendable (Int) -> JSONValue)
    /// A value already written as JSON text on one line (UTF-8), put in as it is: what a reader only
    /// passes on (a worker's score card) need not become a tree (`JSONReader.parse(_:keepingRaw:)`).
    case raw([UInt8])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.double(x), .double(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case let (.raw(x), .raw(y)): return x == y
        case let (.raw(x), _): return (try? JSONReader.parse(x)) == b
        case let (_, .raw(y)): return (try? JSONReader.parse(y)) == a
        default:
            guard let x = a.elements, let y = b.elements else { return false }
            return x == y
        }
    }

    /// An array's elements (a generated one's made now); nil for any other value.
    public var elements: [JSONValue]? {
        switch self {
        case let .array(items): return items
        case let .generated(count, element): return (0..<count).map(element)
        default: return nil
        }
    }

    /// Serializes with two-space indentation (`pretty`) or on one line.
    public func serialized(pretty: Bool = true) -> String {
        String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
    }

    /// `serialized(pretty:)` as UTF-8, built as bytes (no string in between). Room is made at once
    /// for the text of `raw` values, so a line carrying a large one is not copied as it grows.
    public func serializedBytes(pretty: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rawBytes + 4096)
        write(into: &out, indent: pretty ? 0 : -1) { _ in }
        if pretty { out.append(0x0A) }
        return out
    }

    /// The bytes of the `raw` values inside this one (generated arrays are not made to look).
    var rawBytes: Int {
        switch self {
        case let .raw(text): return text.count
        case let .array(items): return items.reduce(0) { $0 + $1.rawBytes }
        case let .object(pairs): return pairs.reduce(0) { $0 + $1.1.rawBytes }
        default: return 0
        }
    }

    /// Appends the value as a pretty document writes it `indent` levels deep (no final line break):
    /// for writers that lay out the rest of a document themselves.
    public func append(to out: inout [UInt8], indent: Int) {
        write(into: &out, indent: indent) { _ in }
    }

    /// `serializedBytes(pretty:)` handed to `sink` in pieces of about `chunkBytes` (the last may be
    /// shorter): what a large report streams to a file.
    public func write<E: Error>(pretty: Bool = true, chunkBytes: Int = 1 << 16, to sink: ([UInt8]) throws(E) -> Void) throws(E) {
        var out: [UInt8] = []
        out.reserveCapacity(chunkBytes + 4096)
        try write(into: &out, indent: pretty ? 0 : -1) { (out: inout [UInt8]) throws(E) in
            guard out.count >= chunkBytes else { return }
            try sink(out)
            out.removeAll(keepingCapacity: true)
        }
        if pretty { out.append(0x0A) }
        if !out.isEmpty { try sink(out) }
    }

    /// Writes the value `indent` levels deep (-1: on one line), calling `pass` after each element of
    /// an array, where a streaming writer hands on what it has.
    private func write<E: Error>(into out: inout [UInt8], indent: Int, pass: (inout [UInt8]) throws(E) -> Void) throws(E) {
        let pretty = indent >= 0
        func newline(_ depth: Int) {
            out.append(0x0A)
            for _ in 0..<(2 * depth) { out.append(0x20) }
        }
        switch self {
        case .null: out += Self.nullBytes
        case let .bool(v): out += v ? Self.trueBytes : Self.falseBytes
        case let .int(v): out += String(v).utf8
        case let .double(v):
            if v.isFinite {
                if v == v.rounded(), abs(v) < 1e15 { out += String(Int(v)).utf8 } else { out += String(v).utf8 }
            } else {
                out += Self.nullBytes
            }
        case let .string(s): Self.escape(s, into: &out)
        case let .raw(text): out += text
        case let .array(items):
            try Self.writeArray(items.count, { items[$0] }, into: &out, indent: indent, pass: pass)
        case let .generated(count, element):
            try Self.writeArray(count, element, into: &out, indent: indent, pass: pass)
        case let .object(pairs):
            if pairs.isEmpty { out += Self.emptyObject; return }
            out.append(0x7B)
            for (k, pair) in pairs.enumerated() {
                if k > 0 { out.append(0x2C) }
                if pretty { newline(indent + 1) }
                Self.escape(pair.0, into: &out)
                out.append(0x3A)
                if pretty { out.append(0x20) }
                try pair.1.write(into: &out, indent: pretty ? indent + 1 : -1, pass: pass)
            }
            if pretty { newline(indent) }
            out.append(0x7D)
        }
    }

    private static func writeArray<E: Error>(_ count: Int, _ element: (Int) -> JSONValue, into out: inout [UInt8], indent: Int,
                                             pass: (inout [UInt8]) throws(E) -> Void) throws(E) {
        if count == 0 { out += emptyArray; return }
        let pretty = indent >= 0
        out.append(0x5B)
        for k in 0..<count {
            if k > 0 { out.append(0x2C) }
            if pretty {
                out.append(0x0A)
                for _ in 0..<(2 * (indent + 1)) { out.append(0x20) }
            }
            try element(k).write(into: &out, indent: pretty ? indent + 1 : -1, pass: pass)
            try pass(&out)
        }
        if pretty {
            out.append(0x0A)
            for _ in 0..<(2 * indent) { out.append(0x20) }
        }
        out.append(0x5D)
    }

    static let nullBytes = Array("null".utf8), trueBytes = Array("true".utf8), falseBytes = Array("false".utf8)
    static let emptyArray = Array("[]".utf8), emptyObject = Array("{}".utf8)

    public static func escape(_ s: String, into out: inout String) {
        var bytes: [UInt8] = []
        escape(s, into: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// `s` as a JSON string, quotes included: `"` and `\` escaped, control characters as `\n`, `\r`,
    /// `\t`, `\b`, `\f` or `\u00XX`, and U+FEFF as `\ufeff`; every other character as its UTF-8.
    public static func escape(_ s: String, into out: inout [UInt8]) {
        out.append(0x22)
        var s = s
        s.withUTF8 { u in
            var i = 0
            while i < u.count {
                let b = u[i]
                switch b {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += [0x5C, 0x6E]
                case 0x0D: out += [0x5C, 0x72]
                case 0x09: out += [0x5C, 0x74]
                case 0x08: out += [0x5C, 0x62]
                case 0x0C: out += [0x5C, 0x66]
                // Foundation's JSONSerialization on Linux drops a raw U+FEFF that starts a string (taken
                // for a byte-order mark), so ktv's own JSON did not read back; escaped, it survives.
                case 0xEF where i + 2 < u.count && u[i + 1] == 0xBB && u[i + 2] == 0xBF:
                    out += feffEscape
                    i += 2
                default:
                    if b < 0x20 {
                        out += [0x5C, 0x75, 0x30, 0x30, hexDigits[Int(b >> 4)], hexDigits[Int(b & 0x0F)]]
                    } else {
                        out.append(b)
                    }
                }
                i += 1
            }
        }
        out.append(0x22)
    }

    static let feffEscape = Array("\\ufeff".utf8), hexDigits = Array("0123456789abcdef".utf8)
}
