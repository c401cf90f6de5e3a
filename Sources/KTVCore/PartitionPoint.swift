extension RandomAccessCollection where Index == Int {
    /// The first index whose element is not `before` (binary search; the collection must hold every
    /// element `before` accepts ahead of every one it refuses, as sorted times do): `count` when all
    /// are. The one search over sorted times, notes and frames, so each caller says only what "before"
    /// means: `starts.partitionPoint { $0 < t }` is the first start at or after t.
    @inlinable   // specialised where it is called: unspecialised, it made replay 8 % slower
    public func partitionPoint(_ before: (Element) -> Bool) -> Int {
        var lo = startIndex, hi = endIndex
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if before(self[mid]) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
