/// Positions and roles over NTP time.

/// Who a device is over time, from its `role` events (before the first one, its first role).
struct RoleTimeline {
    var changes: [(ntp: Int, role: DeviceRole)] = []
    var inferred: DeviceRole?

    func role(at ntp: Int) -> DeviceRole? {
        guard let first = changes.first else { return inferred }
        if ntp < first.ntp { return first.role }
        return changes[changes.partitionPoint { $0.ntp <= ntp } - 1].role
    }

    var everLead: Bool { changes.isEmpty ? inferred == .lead : changes.contains { $0.role == .lead } }
    var mainRole: DeviceRole? { changes.last?.role ?? inferred }
}

/// Which device is the lead at each NTP time: of the devices whose role is `lead` then, the one
/// listed first. Built in one sweep over the role changes (a heap keeps the lowest active device),
/// so even a log that names thousands of leads is answered by binary search.
struct LeadTimeline {
    private var changes: [(ntp: Int, lead: Int?)] = []

    init(roles: [RoleTimeline], usable: [Bool]) {
        // (ntp, device, becomes lead?); Int.min for a device's role before its first change.
        var transitions: [(ntp: Int, device: Int, lead: Bool)] = []
        for (d, r) in roles.enumerated() where usable[d] {
            if r.changes.isEmpty {
                if r.inferred == .lead { transitions.append((Int.min, d, true)) }
                continue
            }
            var isLead = r.changes[0].role == .lead
            if isLead { transitions.append((Int.min, d, true)) }
            for c in r.changes.dropFirst() where (c.role == .lead) != isLead {
                isLead = c.role == .lead
                transitions.append((c.ntp, d, isLead))
            }
        }
        // Stable: a device's changes at the same time keep their order.
        transitions = transitions.enumerated().sorted { a, b in
            a.element.ntp != b.element.ntp ? a.element.ntp < b.element.ntp : a.offset < b.offset
        }.map(\.element)
        var active = Set<Int>()
        var heap: [Int] = []  // min-heap of device indices, stale entries skipped lazily
        func push(_ v: Int) {
            heap.append(v)
            var k = heap.count - 1
            while k > 0, heap[(k - 1) / 2] > heap[k] { heap.swapAt(k, (k - 1) / 2); k = (k - 1) / 2 }
        }
        func popMin() {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            var k = 0
            while true {
                let l = 2 * k + 1, r = l + 1
                var m = k
                if l < heap.count, heap[l] < heap[m] { m = l }
                if r < heap.count, heap[r] < heap[m] { m = r }
                if m == k { break }
                heap.swapAt(k, m)
                k = m
            }
        }
        var i = 0
        while i < transitions.count {
            let t = transitions[i].ntp
            while i < transitions.count, transitions[i].ntp == t {
                let x = transitions[i]
                if x.lead { if active.insert(x.device).inserted { push(x.device) } } else { active.remove(x.device) }
                i += 1
            }
            while let top = heap.first, !active.contains(top) { popMin() }
            let current = heap.first
            if changes.last.map({ $0.lead != current }) ?? true { changes.append((t, current)) }
        }
    }

    func lead(at t: Int) -> Int? {
        guard !changes.isEmpty, changes[0].ntp <= t else { return nil }
        return changes[changes.partitionPoint { $0.ntp <= t } - 1].lead
    }
}

/// A player's position as a function of NTP time, from its `playing` progress callbacks.
///
/// Callbacks are grouped into segments that end at every seek, command, non-playing callback or
/// backward jump: the position is interpolated linearly inside a segment, never across its ends,
/// and extrapolated at the nominal rate (1 ms per ms) at most `maxExtrapolationMs` past a callback.
struct PositionTimeline {
    var ntp: [Int] = []
    var pos: [Int] = []
    struct Segment { var startNtp: Int; var endNtp: Int; var first: Int; var last: Int }
    var segments: [Segment] = []
    let maxExtrapolationMs: Int

    init(_ events: [LogEvent], maxExtrapolationMs: Int) {
        self.maxExtrapolationMs = maxExtrapolationMs
        var open = false
        var boundaryNtp: Int?  // when the next segment may begin (a seek or play), if known
        func close(at end: Int) {
            if open {
                segments[segments.count - 1].endNtp = max(end, segments[segments.count - 1].endNtp)
                open = false
            }
        }
        for e in events {
            switch e.body {
            case let .progress(p, state, _):
                guard state == .playing else { close(at: e.ntpMs); boundaryNtp = nil; continue }
                if open, let lastPos = pos.last, p < lastPos {
                    // A backward jump without a seek: the player glitched; do not interpolate across it.
                    close(at: e.ntpMs)
                    boundaryNtp = e.ntpMs
                }
                if !open {
                    let start = min(boundaryNtp ?? e.ntpMs, e.ntpMs)
                    segments.append(Segment(startNtp: start, endNtp: e.ntpMs + maxExtrapolationMs, first: ntp.count, last: ntp.count))
                    open = true
                    boundaryNtp = nil
                }
                ntp.append(e.ntpMs)
                pos.append(p)
                segments[segments.count - 1].last = ntp.count - 1
                segments[segments.count - 1].endNtp = e.ntpMs + maxExtrapolationMs
            case .seek, .command:
                if open {
                    segments[segments.count - 1].endNtp = e.ntpMs
                    open = false
                }
                if case .command(let c) = e.body, c == .pause || c == .stop { boundaryNtp = nil } else { boundaryNtp = e.ntpMs }
            default:
                break
            }
        }
        // Segments must not overlap in time: a segment ends no later than the next one starts.
        for k in segments.indices.dropLast() where segments[k].endNtp > segments[k + 1].startNtp {
            segments[k].endNtp = segments[k + 1].startNtp
        }
    }

    var isEmpty: Bool { ntp.isEmpty }

    /// The position at `t`, or nil when the player was not known to be playing then.
    func position(at t: Int) -> Double? {
        guard !segments.isEmpty else { return nil }
        // The last segment starting at or before t.
        if segments[0].startNtp > t { return nil }
        let s = segments[segments.partitionPoint { $0.startNtp <= t } - 1]
        guard t <= s.endNtp else { return nil }
        // The last callback at or before t inside the segment.
        var a = s.first, b = s.last
        if ntp[a] > t {
            let before = ntp[a] - t
            return before <= maxExtrapolationMs ? Double(pos[a] - before) : nil
        }
        while a < b {
            let mid = (a + b + 1) / 2
            if ntp[mid] <= t { a = mid } else { b = mid - 1 }
        }
        if a < s.last {
            let t0 = ntp[a], t1 = ntp[a + 1]
            if t1 == t0 { return Double(pos[a + 1]) }
            return Double(pos[a]) + Double(pos[a + 1] - pos[a]) * Double(t - t0) / Double(t1 - t0)
        }
        let after = t - ntp[a]
        return after <= maxExtrapolationMs ? Double(pos[a] + after) : nil
    }

    /// Whether the player logged at least `count` playing callbacks strictly between a and b.
    func callbacks(between a: Int, and b: Int) -> Int {
        max(0, ntp.partitionPoint { $0 < b } - ntp.partitionPoint { $0 <= a })
    }
}
