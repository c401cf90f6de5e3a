import KTVCore

/// Appends JSON Lines events to a byte buffer without building strings: the simulator writes a
/// million lines for the benchmark, so numbers are formatted straight into the buffer.
struct LineWriter {
    var bytes: [UInt8] = []
    private(set) var lines = 0

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    @inline(__always)
    mutating func raw(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    mutating func raw(_ b: [UInt8]) { bytes.append(contentsOf: b) }

    mutating func int(_ value: Int) {
        if value == 0 { bytes.append(0x30); return }
        var v = value.magnitude
        if value < 0 { bytes.append(0x2D) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 {
                d[n] = UInt8(v % 10) + 0x30
                v /= 10
                n += 1
            }
            for k in stride(from: n - 1, through: 0, by: -1) { bytes.append(d[k]) }
        }
    }

    /// A double with at most `digits` decimals (truth values); integers print without a point.
    mutating func number(_ v: Double, digits: Int = 3) {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let r = (v * scale).rounded() / scale
        if r == r.rounded(), abs(r) < 1e15 { int(Int(r)) } else { raw(Array("\(r)".utf8)) }
    }

    /// `"key":value` inside an object, after a comma unless it is the object's first member: the
    /// vendor payloads, whose optional members may be left out.
    mutating func member(_ key: StaticString, _ value: Int) {
        memberKey(key)
        int(value)
    }

    /// A member whose number is written as a string (`"music_duration":"240000"`).
    mutating func member(_ key: StaticString, quoted value: Int) {
        memberKey(key)
        bytes.append(0x22)
        int(value)
        bytes.append(0x22)
    }

    /// A member with a literal string value (no escaping needed).
    mutating func member(_ key: StaticString, text: StaticString) {
        memberKey(key)
        bytes.append(0x22)
        raw(text)
        bytes.append(0x22)
    }

    private mutating func memberKey(_ key: StaticString) {
        if bytes.last != 0x7B { bytes.append(0x2C) }
        bytes.append(0x22)
        raw(key)
        raw("\":")
    }

    mutating func string(_ s: String) {
        var out = ""
        JSONValue.escape(s, into: &out)
        bytes.append(contentsOf: out.utf8)
    }

    static func quoted(_ s: String) -> [UInt8] {
        var out = ""
        JSONValue.escape(s, into: &out)
        return Array(out.utf8)
    }

    /// `{"device":…,"at":…,"ntp":…,"kind":"…"` — the caller adds fields, then `end()`.
    mutating func begin(device: [UInt8], at: Int, ntp: Int, kind: StaticString) {
        raw("{\"device\":")
        raw(device)
        raw(",\"at\":")
        int(at)
        raw(",\"ntp\":")
        int(ntp)
        raw(",\"kind\":\"")
        raw(kind)
        raw("\"")
    }

    mutating func end() {
        raw("}\n")
        lines += 1
    }
}
