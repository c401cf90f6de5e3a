import KTVCore

/// A karaoke room to simulate: devices with their clocks, players and networks, the lead's pauses,
/// and injected faults. All times are true time in ms from the start of the room.
public struct Scenario: Sendable {
    public struct Lag: Sendable, Equatable {
        public var atMs: Int
        public var lagMs: Int
        public init(atMs: Int, lagMs: Int) { self.atMs = atMs; self.lagMs = lagMs }
    }

    public struct Span: Sendable, Equatable {
        public var atMs: Int
        public var durationMs: Int
        public init(atMs: Int, durationMs: Int) { self.atMs = atMs; self.durationMs = durationMs }
    }

    public struct Device: Sendable {
        public var name: String
        public var role: DeviceRole
        /// The device's NTP time minus true time (its clock error).
        public var clockErrorMs: Double = 0
        /// Player speed: 0.9996 plays 0.4 ms per second slow.
        public var rate: Double = 1
        /// Progress callback interval (ZEGO 60 ms, Agora 100 ms) and how late each one may fire.
        public var callbackMs = 60
        public var callbackJitterMs = 4
        /// Network delay of messages to this device: base plus uniform 0…jitter (in order).
        public var netDelayMs = 40
        public var netJitterMs = 15
        /// Audio playout delay (Agora subtracts the sender's and adds the receiver's).
        public var playoutDelayMs = 0
        /// When the device enters the room; later than the song start means a mid-join.
        public var joinMs = 0
        /// A scheduled start fires up to this late.
        public var startLatencyMs = 8
        /// Headphone plug or unplug: the player stops advancing for `lagMs`.
        public var headphoneLags: [Lag] = []
        /// Spans without progress callbacks while the player keeps playing.
        public var callbackStalls: [Span] = []

        public init(name: String, role: DeviceRole) {
            self.name = name
            self.role = role
        }
    }

    public enum FaultKind: String, Sendable, CaseIterable {
        /// The first drift decision at or after the time is not executed.
        case missedSeek = "missed_seek"
        /// The first drift decision at or after the time seeks `offsetMs` off target.
        case wrongTarget = "wrong_target"
        /// Messages to the device are lost for `durationMs`.
        case lostMessages = "lost_messages"
        /// At the first quiet callback at or after the time the device seeks by `offsetMs` for no reason.
        case spuriousSeek = "spurious_seek"
    }

    public struct Fault: Sendable {
        public var kind: FaultKind
        public var device: String
        public var atMs: Int
        public var offsetMs: Int
        public var durationMs: Int

        public init(kind: FaultKind, device: String, atMs: Int, offsetMs: Int = -120, durationMs: Int = 3000) {
            self.kind = kind
            self.device = device
            self.atMs = atMs
            self.offsetMs = offsetMs
            self.durationMs = durationMs
        }
    }

    public var name: String
    public var rules: RuleSet
    public var seed: UInt64 = 1
    public var songMs = 240_000
    /// How long the room is simulated.
    public var roomMs = 120_000
    /// When the lead picks the song (ZEGO and Tencent then start everyone in the future).
    public var announceMs = 1_000
    /// ZEGO `StartInFuture` lead time (demo code: 2000); Tencent uses 3000.
    public var startDelayMs = 2_000
    /// The threshold the simulated devices use (default: the rule set's).
    public var thresholdMs: Int?
    public var twoSided = false
    /// Writes Agora message stamps in the NTP-1900 epoch, as `getNtpTimeInMs()` does.
    public var ntp1900 = false
    /// NTP time at true time 0.
    public var startNtpMs = 1_700_000_000_000
    public var devices: [Device] = []
    /// Lead pauses (mirrored by the chorus).
    public var pauses: [Span] = []
    public var faults: [Fault] = []

    public init(name: String, rules: RuleSet) {
        self.name = name
        self.rules = rules
    }

    public var thresholdUsedMs: Int { thresholdMs ?? rules.defaultThresholdMs }

    /// The names `--scenario` accepts.
    public static let builtInNames = ["zego", "zego-faults", "agora", "agora-faults", "tencent", "tencent-faults", "demo", "long"]

    /// A built-in room. `zego`, `agora`, `tencent`: clean rooms (every verdict ok) with a mid-join,
    /// player rate drift, a headphone lag and (ZEGO, Agora) a pause; `*-faults` add one fault of
    /// each kind; `demo` is a short ZEGO room with faults; `long` is a 3-hour, 4-device ZEGO room.
    public static func builtIn(_ name: String) -> Scenario? {
        switch name {
        case "zego": return zego(faults: false)
        case "zego-faults": return zego(faults: true)
        case "agora": return agora(faults: false)
        case "agora-faults": return agora(faults: true)
        case "tencent": return tencent(faults: false)
        case "tencent-faults": return tencent(faults: true)
        case "demo": return demo()
        case "long": return long()
        default: return nil
        }
    }

    static func zego(faults: Bool) -> Scenario {
        var s = Scenario(name: faults ? "zego-faults" : "zego", rules: .zego)
        s.seed = 11
        var lead = Device(name: "lead", role: .lead)
        lead.clockErrorMs = 0.4
        var b = Device(name: "B", role: .chorus)
        b.clockErrorMs = 6.3
        b.rate = 0.9996
        b.headphoneLags = [Lag(atMs: 40_000, lagMs: 110)]
        var c = Device(name: "C", role: .chorus)
        c.clockErrorMs = -4.7
        c.joinMs = 20_000
        c.rate = 0.9998
        c.headphoneLags = [Lag(atMs: 70_000, lagMs: 150)]
        c.callbackStalls = [Span(atMs: 84_000, durationMs: 400)]
        var aud = Device(name: "aud1", role: .audience)
        aud.clockErrorMs = 12.1
        aud.netDelayMs = 600
        aud.netJitterMs = 150
        s.devices = [lead, b, c, aud]
        s.pauses = [Span(atMs: 50_000, durationMs: 4_000)]
        if faults {
            s.faults = [
                Fault(kind: .missedSeek, device: "B", atMs: 40_000),
                Fault(kind: .wrongTarget, device: "C", atMs: 70_000, offsetMs: -120),
                Fault(kind: .spuriousSeek, device: "B", atMs: 90_000, offsetMs: -150),
                Fault(kind: .lostMessages, device: "C", atMs: 100_000, durationMs: 3_000),
            ]
        }
        return s
    }

    static func agora(faults: Bool) -> Scenario {
        var s = Scenario(name: faults ? "agora-faults" : "agora", rules: .agora)
        s.seed = 12
        s.ntp1900 = true
        var lead = Device(name: "lead", role: .lead)
        lead.callbackMs = 100
        lead.playoutDelayMs = 40
        lead.clockErrorMs = -1.2
        var b = Device(name: "B", role: .chorus)
        b.callbackMs = 100
        b.playoutDelayMs = 60
        b.rate = 0.9995
        b.clockErrorMs = 3.4
        b.headphoneLags = [Lag(atMs: 45_000, lagMs: 120), Lag(atMs: 105_000, lagMs: 100)]
        var c = Device(name: "C", role: .chorus)
        c.callbackMs = 100
        c.playoutDelayMs = 30
        c.rate = 1.0005
        c.clockErrorMs = -7.9
        c.joinMs = 15_000
        c.headphoneLags = [Lag(atMs: 75_000, lagMs: 90), Lag(atMs: 112_000, lagMs: 110)]
        var aud = Device(name: "aud1", role: .audience)
        aud.callbackMs = 100
        aud.netDelayMs = 300
        aud.netJitterMs = 80
        aud.clockErrorMs = 2.2
        s.devices = [lead, b, c, aud]
        s.pauses = [Span(atMs: 60_000, durationMs: 3_000)]
        if faults {
            s.faults = [
                Fault(kind: .missedSeek, device: "B", atMs: 45_000),
                Fault(kind: .wrongTarget, device: "C", atMs: 75_000, offsetMs: 140),
                Fault(kind: .spuriousSeek, device: "B", atMs: 90_000, offsetMs: -150),
                Fault(kind: .lostMessages, device: "B", atMs: 100_000, durationMs: 2_500),
            ]
        }
        return s
    }

    static func tencent(faults: Bool) -> Scenario {
        var s = Scenario(name: faults ? "tencent-faults" : "tencent", rules: .tencent)
        s.seed = 13
        s.startDelayMs = 3_000
        var lead = Device(name: "lead", role: .lead)
        lead.callbackMs = 100
        lead.clockErrorMs = 1.5
        var b = Device(name: "B", role: .chorus)
        b.callbackMs = 100
        b.rate = 0.9994
        b.clockErrorMs = -3.1
        b.headphoneLags = [Lag(atMs: 50_000, lagMs: 200), Lag(atMs: 110_000, lagMs: 120)]
        var c = Device(name: "C", role: .chorus)
        c.callbackMs = 100
        c.rate = 1.0006
        c.clockErrorMs = 5.6
        c.joinMs = 30_000
        c.headphoneLags = [Lag(atMs: 80_000, lagMs: 160), Lag(atMs: 100_000, lagMs: 140)]
        var aud = Device(name: "aud1", role: .audience)
        aud.callbackMs = 100
        aud.netDelayMs = 1_500
        aud.netJitterMs = 300
        aud.clockErrorMs = -9.0
        s.devices = [lead, b, c, aud]
        if faults {
            s.faults = [
                Fault(kind: .missedSeek, device: "B", atMs: 50_000),
                Fault(kind: .wrongTarget, device: "C", atMs: 80_000, offsetMs: -130),
                Fault(kind: .spuriousSeek, device: "B", atMs: 95_000, offsetMs: 180),
                Fault(kind: .lostMessages, device: "C", atMs: 104_000, durationMs: 4_000),
            ]
        }
        return s
    }

    static func demo() -> Scenario {
        var s = zego(faults: true)
        s.name = "demo"
        s.roomMs = 36_000
        s.devices[1].headphoneLags = [Lag(atMs: 10_000, lagMs: 110)]
        s.devices[2].joinMs = 6_000
        s.devices[2].headphoneLags = [Lag(atMs: 20_000, lagMs: 150)]
        s.devices[2].callbackStalls = [Span(atMs: 24_000, durationMs: 400)]
        s.pauses = [Span(atMs: 14_000, durationMs: 2_000)]
        s.faults = [
            Fault(kind: .missedSeek, device: "B", atMs: 10_000),
            Fault(kind: .wrongTarget, device: "C", atMs: 20_000, offsetMs: -120),
            Fault(kind: .spuriousSeek, device: "B", atMs: 26_000, offsetMs: -150),
            Fault(kind: .lostMessages, device: "C", atMs: 30_000, durationMs: 3_000),
        ]
        return s
    }

    /// About a million events: a 3-hour ZEGO room with a lead, two singers and one listener.
    static func long() -> Scenario {
        var s = zego(faults: false)
        s.name = "long"
        s.songMs = 11_000_000
        s.roomMs = 3 * 3_600_000
        s.pauses = [Span(atMs: 3_600_000, durationMs: 10_000)]
        s.devices[1].headphoneLags = (1...10).map { Lag(atMs: $0 * 1_000_000 + 5_000, lagMs: 100) }
        s.devices[2].headphoneLags = []
        s.devices[2].callbackStalls = []
        return s
    }
}

extension Scenario {
    /// Reads a scenario file: a JSON object with the fields of a built-in (snake_case), optionally
    /// on top of one (`"base": "zego"`). See docs/progress-log.md, "Simulator scenarios".
    public static func parse(_ bytes: [UInt8], fileName: String) throws(SyncError) -> Scenario {
        let root: JSONValue
        do { root = try JSONScanner.parse(bytes) } catch {
            throw .badScenario(detail: "\(fileName): not JSON: at byte \(error.offset): \(error.message)")
        }
        guard case let .object(pairs) = root else { throw .badScenario(detail: "\(fileName): the scenario must be a JSON object") }
        func bad(_ field: String, _ what: String) -> SyncError { .badScenario(detail: "\(fileName): `\(field)` \(what)") }
        func int(_ v: JSONValue, _ field: String, _ range: ClosedRange<Int>) throws(SyncError) -> Int {
            guard let d = v.number, d.isFinite, d == d.rounded(), d >= Double(range.lowerBound), d <= Double(range.upperBound) else {
                throw bad(field, "must be a whole number in \(range.lowerBound)…\(range.upperBound)")
            }
            return Int(d)
        }
        func double(_ v: JSONValue, _ field: String, _ range: ClosedRange<Double>) throws(SyncError) -> Double {
            guard let d = v.number, d.isFinite, range.contains(d) else { throw bad(field, "must be a number in \(range.lowerBound)…\(range.upperBound)") }
            return d
        }
        func string(_ v: JSONValue, _ field: String) throws(SyncError) -> String {
            guard let s = v.string else { throw bad(field, "must be a string") }
            return s
        }
        func bool(_ v: JSONValue, _ field: String) throws(SyncError) -> Bool {
            guard case let .bool(b) = v else { throw bad(field, "must be true or false") }
            return b
        }
        func objects(_ v: JSONValue, _ field: String) throws(SyncError) -> [[(String, JSONValue)]] {
            guard case let .array(items) = v else { throw bad(field, "must be an array of objects") }
            var out: [[(String, JSONValue)]] = []
            for item in items {
                guard case let .object(p) = item else { throw bad(field, "must be an array of objects") }
                out.append(p)
            }
            return out
        }
        let day = 0...86_400_000

        var s: Scenario
        if let base = root["base"] {
            let name = try string(base, "base")
            guard let b = Scenario.builtIn(name) else { throw bad("base", "names no built-in scenario; use one of \(builtInNames.joined(separator: ", "))") }
            s = b
        } else {
            guard let r = root["rules"] else { throw bad("rules", "is missing; give `rules` (zego, agora, tencent) or a `base` scenario") }
            guard let rules = RuleSet(rawValue: try string(r, "rules")) else { throw bad("rules", "must be zego, agora or tencent") }
            s = Scenario(name: baseName(fileName), rules: rules)
            if rules == .tencent { s.startDelayMs = 3_000 }
        }
        for (key, v) in pairs {
            switch key {
            case "base": break
            case "name": s.name = try string(v, key)
            case "rules":
                guard let r = RuleSet(rawValue: try string(v, key)) else { throw bad(key, "must be zego, agora or tencent") }
                s.rules = r
            case "seed": s.seed = UInt64(try int(v, key, 0...Int(Int32.max)))
            case "song_ms": s.songMs = try int(v, key, 1_000...day.upperBound)
            case "room_ms": s.roomMs = try int(v, key, 1_000...day.upperBound)
            case "announce_ms": s.announceMs = try int(v, key, day)
            case "start_delay_ms": s.startDelayMs = try int(v, key, 1...600_000)
            case "threshold_ms": s.thresholdMs = try int(v, key, 1...10_000)
            case "two_sided": s.twoSided = try bool(v, key)
            case "ntp1900": s.ntp1900 = try bool(v, key)
            case "start_ntp_ms": s.startNtpMs = try int(v, key, 0...4_000_000_000_000)
            case "pauses":
                s.pauses = []
                for p in try objects(v, key) {
                    let o = JSONValue.object(p)
                    guard let at = o["at_ms"], let d = o["duration_ms"] else { throw bad(key, "entries need `at_ms` and `duration_ms`") }
                    s.pauses.append(Span(atMs: try int(at, "pauses.at_ms", day), durationMs: try int(d, "pauses.duration_ms", 1...day.upperBound)))
                }
            case "faults":
                s.faults = []
                for p in try objects(v, key) {
                    let o = JSONValue.object(p)
                    guard let k = o["kind"], let dev = o["device"], let at = o["at_ms"] else { throw bad(key, "entries need `kind`, `device` and `at_ms`") }
                    guard let kind = FaultKind(rawValue: try string(k, "faults.kind")) else {
                        throw bad("faults.kind", "must be one of \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    var f = Fault(kind: kind, device: try string(dev, "faults.device"), atMs: try int(at, "faults.at_ms", day))
                    if kind == .spuriousSeek { f.offsetMs = -150 }
                    if let o2 = o["offset_ms"] { f.offsetMs = try int(o2, "faults.offset_ms", -600_000...600_000) }
                    if let d = o["duration_ms"] { f.durationMs = try int(d, "faults.duration_ms", 1...day.upperBound) }
                    s.faults.append(f)
                }
            case "devices":
                s.devices = []
                for p in try objects(v, key) {
                    let o = JSONValue.object(p)
                    guard let n = o["name"], let r = o["role"] else { throw bad(key, "entries need `name` and `role`") }
                    guard let role = DeviceRole(rawValue: try string(r, "devices.role")) else { throw bad("devices.role", "must be lead, chorus or audience") }
                    var d = Device(name: try string(n, "devices.name"), role: role)
                    if s.rules != .zego { d.callbackMs = 100 }
                    if role == .audience { d.netDelayMs = 600; d.netJitterMs = 150 }
                    for (dk, dv) in p {
                        let f = "devices.\(dk)"
                        switch dk {
                        case "name", "role": break
                        case "clock_error_ms": d.clockErrorMs = try double(dv, f, -10_000...10_000)
                        case "rate": d.rate = try double(dv, f, 0.5...2)
                        case "callback_ms": d.callbackMs = try int(dv, f, 5...10_000)
                        case "callback_jitter_ms": d.callbackJitterMs = try int(dv, f, 0...10_000)
                        case "net_delay_ms": d.netDelayMs = try int(dv, f, 0...60_000)
                        case "net_jitter_ms": d.netJitterMs = try int(dv, f, 0...60_000)
                        case "playout_delay_ms": d.playoutDelayMs = try int(dv, f, 0...10_000)
                        case "join_ms": d.joinMs = try int(dv, f, day)
                        case "start_latency_ms": d.startLatencyMs = try int(dv, f, 0...10_000)
                        case "headphone_lags":
                            d.headphoneLags = []
                            for l in try objects(dv, f) {
                                let lo = JSONValue.object(l)
                                guard let at = lo["at_ms"], let lag = lo["lag_ms"] else { throw bad(f, "entries need `at_ms` and `lag_ms`") }
                                d.headphoneLags.append(Lag(atMs: try int(at, f, day), lagMs: try int(lag, f, 1...60_000)))
                            }
                        case "callback_stalls":
                            d.callbackStalls = []
                            for l in try objects(dv, f) {
                                let lo = JSONValue.object(l)
                                guard let at = lo["at_ms"], let dur = lo["duration_ms"] else { throw bad(f, "entries need `at_ms` and `duration_ms`") }
                                d.callbackStalls.append(Span(atMs: try int(at, f, day), durationMs: try int(dur, f, 1...600_000)))
                            }
                        default:
                            throw bad(f, "is not a device field (see docs/progress-log.md)")
                        }
                    }
                    s.devices.append(d)
                }
            default:
                throw bad(key, "is not a scenario field (see docs/progress-log.md)")
            }
        }
        try s.check(fileName: fileName)
        return s
    }

    /// The room must have exactly one lead, unique names, and faults on devices that exist.
    public func check(fileName: String = "scenario") throws(SyncError) {
        let leads = devices.filter { $0.role == .lead }
        guard leads.count == 1 else { throw .badScenario(detail: "\(fileName): a room needs exactly one device with role `lead` (found \(leads.count))") }
        guard leads[0].joinMs <= announceMs else { throw .badScenario(detail: "\(fileName): the lead must be in the room when the song is picked (join_ms ≤ announce_ms)") }
        var names = Set<String>()
        for d in devices {
            guard !d.name.isEmpty, names.insert(d.name).inserted else { throw .badScenario(detail: "\(fileName): device names must be unique and not empty (`\(d.name)`)") }
        }
        for f in faults where !names.contains(f.device) {
            throw .badScenario(detail: "\(fileName): fault on unknown device `\(f.device)`")
        }
        for f in faults where devices.first(where: { $0.name == f.device })?.role != .chorus {
            throw .badScenario(detail: "\(fileName): faults apply to chorus devices; `\(f.device)` is not one")
        }
    }
}

/// File name without folders and extension, without Foundation.
private func baseName(_ path: String) -> String {
    let last = path.split(separator: "/").last.map(String.init) ?? path
    if let dot = last.lastIndex(of: "."), dot != last.startIndex { return String(last[..<dot]) }
    return last
}
