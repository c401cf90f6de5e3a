import KTVCore

/// Shard K of N of a manifest: the rows whose id hashes to it, so N machines (a Slurm array, a
/// Kubernetes indexed job, N Spark tasks) split one manifest without talking to each other.
///
/// The hash is 64-bit FNV-1a (Fowler, Noll and Vo) of the id's UTF-8 bytes, and a row belongs to
/// shard `hash mod N + 1`. It depends on nothing but the id: not on the row's position, the
/// machine, the process or the Swift version (Swift's own `Hasher` is seeded per process), so every
/// run and every reimplementation (see the README for three lines of Python) agree.
public struct BatchShard: Sendable, Equatable, CustomStringConvertible {
    /// 1-based.
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) throws(BatchError) {
        guard count >= 1, count <= 1_000_000, (1...count).contains(index) else {
            throw .invalidParameter(name: "shard", value: "\(index)/\(count)", allowed: "K/N with 1 ≤ K ≤ N ≤ 1000000")
        }
        self.index = index
        self.count = count
    }

    /// `K/N`.
    public init(parsing text: String) throws(BatchError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]) else {
            throw .invalidParameter(name: "shard", value: quoted(text), allowed: "K/N, e.g. 2/8 (the second of eight shards)")
        }
        try self.init(index: k, count: n)
    }

    /// FNV-1a, 64 bits.
    public static func hash(_ id: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.utf8 {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        return h
    }

    /// The shard (1-based) `id` belongs to out of `count`.
    public static func shard(of id: String, count: Int) -> Int { Int(hash(id) % UInt64(count)) + 1 }

    /// Rows without an id (an error line each) go where the empty id does, so exactly one shard reports them.
    public func contains(id: String?) -> Bool { Self.shard(of: id ?? "", count: count) == index }

    public var description: String { "\(index)/\(count)" }
}
