import KTVCore

/// Gives each device name a small number, comparing the raw bytes so the common case allocates nothing.
struct DeviceInterner {
    var names: [String] = []
    private var keys: [[UInt8]] = []
    private var last = -1

    private var index: [String: Int] = [:]

    mutating func id(_ s: JSONReader, _ r: JSONReader.StringRange) -> Int {
        if r.escaped { return id(named: s.makeString(r)) }
        let n = r.end - r.start
        // Lines usually alternate between a few devices: try the last one, then a short scan
        // without allocating; a log with many names goes through the dictionary.
        if last >= 0, equal(keys[last], s, r.start, n) { return last }
        if keys.count <= 16 {
            for k in 0..<keys.count where equal(keys[k], s, r.start, n) { last = k; return k }
        }
        last = id(named: String(decoding: UnsafeBufferPointer(rebasing: s.bytes[r.start..<r.end]), as: UTF8.self))
        return last
    }

    mutating func id(named name: String) -> Int {
        if let k = index[name] { return k }
        names.append(name)
        keys.append(Array(name.utf8))
        index[name] = names.count - 1
        return names.count - 1
    }

    @inline(__always)
    private func equal(_ key: [UInt8], _ s: JSONReader, _ start: Int, _ n: Int) -> Bool {
        guard key.count == n else { return false }
        return key.withUnsafeBufferPointer { k in
            for j in 0..<n where k[j] != s.bytes[start + j] { return false }
            return true
        }
    }
}
