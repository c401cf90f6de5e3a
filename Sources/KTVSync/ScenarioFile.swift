#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KTVCore

extension Scenario {
    /// A built-in scenario by name, else the scenario file at that path (`ktv replay simulate --scenario`).
    public static func load(_ nameOrPath: String) throws(SyncError) -> Scenario {
        if let builtIn = builtIn(nameOrPath) { return builtIn }
        var st = stat()
        guard stat(nameOrPath, &st) == 0 else { throw .unknownScenario(nameOrPath) }
        let bytes: [UInt8]
        do { bytes = try FileIO.read(nameOrPath) } catch {
            throw .cannotRead(path: nameOrPath, reason: error.reason)
        }
        return try parse(bytes, fileName: nameOrPath)
    }

    /// Reads a scenario file: a JSON object with the fields of a built-in (snake_case), optionally
    /// on top of one (`"base": "zego"`). See docs/progress-log.md, "The simulator and truth events".
    public static func parse(_ bytes: [UInt8], fileName: String) throws(SyncError) -> Scenario {
        let root: JSONValue
        do { root = try JSONReader.parse(bytes) } catch {
            throw .badScenario(detail: "\(fileName): not JSON: at byte \(error.byteOffset): \(error.message)")
        }
        guard case let .object(pairs) = root else { throw .badScenario(detail: "\(fileName): the scenario must be a JSON object") }
        let r = ScenarioReader(fileName: fileName)
        var s = try r.start(root)
        for (key, v) in pairs {
            switch key {
            case "base": break
            case "name": s.name = try r.string(v, key)
            case "rules": s.rules = try r.rules(v, key)
            case "seed": s.seed = UInt64(try r.int(v, key, 0...Int(Int32.max)))
            case "song_ms": s.songMs = try r.int(v, key, 1_000...ScenarioReader.day.upperBound)
            case "room_ms": s.roomMs = try r.int(v, key, 1_000...ScenarioReader.day.upperBound)
            case "announce_ms": s.announceMs = try r.int(v, key, ScenarioReader.day)
            case "start_delay_ms": s.startDelayMs = try r.int(v, key, 1...600_000)
            case "threshold_ms": s.thresholdMs = try r.int(v, key, 1...10_000)
            case "two_sided": s.twoSided = try r.bool(v, key)
            case "ntp1900": s.ntp1900 = try r.bool(v, key)
            case "start_ntp_ms": s.startNtpMs = try r.int(v, key, 0...4_000_000_000_000)
            case "pauses": s.pauses = try r.objects(v, key).map { p throws(SyncError) in try r.pause(p, key) }
            case "faults": s.faults = try r.objects(v, key).map { p throws(SyncError) in try r.fault(p, key) }
            case "devices": s.devices = try r.objects(v, key).map { p throws(SyncError) in try r.device(p, key, rules: s.rules) }
            default:
                throw r.bad(key, "is not a scenario field (see docs/progress-log.md)")
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

/// Reads the values of a scenario file; every error names the file and the field.
struct ScenarioReader {
    let fileName: String
    static let day = 0...86_400_000

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

    func rules(_ v: JSONValue, _ field: String) throws(SyncError) -> RuleSet {
        guard let r = RuleSet(rawValue: try string(v, field)) else { throw bad(field, "must be zego, agora or tencent") }
        return r
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

    /// The scenario the file's fields apply to: its `base`, or a new one with the `rules` vendor's defaults.
    func start(_ root: JSONValue) throws(SyncError) -> Scenario {
        if let base = root["base"] {
            let name = try string(base, "base")
            guard let b = Scenario.builtIn(name) else { throw bad("base", "names no built-in scenario; use one of \(Scenario.builtInNames.joined(separator: ", "))") }
            return b
        }
        guard let r = root["rules"] else { throw bad("rules", "is missing; give `rules` (zego, agora, tencent) or a `base` scenario") }
        let rules = try self.rules(r, "rules")
        var s = Scenario(name: baseName(fileName), rules: rules)
        s.startDelayMs = rules.rules.defaultStartDelayMs
        return s
    }

    func pause(_ p: [(String, JSONValue)], _ key: String) throws(SyncError) -> Scenario.Span {
        let o = JSONValue.object(p)
        guard let at = o["at_ms"], let d = o["duration_ms"] else { throw bad(key, "entries need `at_ms` and `duration_ms`") }
        return Scenario.Span(atMs: try int(at, "pauses.at_ms", Self.day), durationMs: try int(d, "pauses.duration_ms", 1...Self.day.upperBound))
    }

    func fault(_ p: [(String, JSONValue)], _ key: String) throws(SyncError) -> Scenario.Fault {
        let o = JSONValue.object(p)
        guard let k = o["kind"], let dev = o["device"], let at = o["at_ms"] else { throw bad(key, "entries need `kind`, `device` and `at_ms`") }
        guard let kind = Scenario.FaultKind(rawValue: try string(k, "faults.kind")) else {
            throw bad("faults.kind", "must be one of \(Scenario.FaultKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var f = Scenario.Fault(kind: kind, device: try string(dev, "faults.device"), atMs: try int(at, "faults.at_ms", Self.day))
        if kind == .spuriousSeek { f.offsetMs = -150 }
        if let o2 = o["offset_ms"] { f.offsetMs = try int(o2, "faults.offset_ms", -600_000...600_000) }
        if let d = o["duration_ms"] { f.durationMs = try int(d, "faults.duration_ms", 1...Self.day.upperBound) }
        return f
    }

    /// A listed device: the `rules` vendor's callback interval and, for listeners, 600 ± 150 ms of network delay, then its fields.
    func device(_ p: [(String, JSONValue)], _ key: String, rules: RuleSet) throws(SyncError) -> Scenario.Device {
        let o = JSONValue.object(p)
        guard let n = o["name"], let r = o["role"] else { throw bad(key, "entries need `name` and `role`") }
        guard let role = DeviceRole(rawValue: try string(r, "devices.role")) else { throw bad("devices.role", "must be lead, chorus or audience") }
        var d = Scenario.Device(name: try string(n, "devices.name"), role: role)
        d.callbackMs = rules.rules.defaultCallbackMs
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
            case "join_ms": d.joinMs = try int(dv, f, Self.day)
            case "start_latency_ms": d.startLatencyMs = try int(dv, f, 0...10_000)
            case "headphone_lags":
                d.headphoneLags = try objects(dv, f).map { l throws(SyncError) in
                    let lo = JSONValue.object(l)
                    guard let at = lo["at_ms"], let lag = lo["lag_ms"] else { throw bad(f, "entries need `at_ms` and `lag_ms`") }
                    return Scenario.Lag(atMs: try int(at, f, Self.day), lagMs: try int(lag, f, 1...60_000))
                }
            case "callback_stalls":
                d.callbackStalls = try objects(dv, f).map { l throws(SyncError) in
                    let lo = JSONValue.object(l)
                    guard let at = lo["at_ms"], let dur = lo["duration_ms"] else { throw bad(f, "entries need `at_ms` and `duration_ms`") }
                    return Scenario.Span(atMs: try int(at, f, Self.day), durationMs: try int(dur, f, 1...600_000))
                }
            default:
                throw bad(f, "is not a device field (see docs/progress-log.md)")
            }
        }
        return d
    }
}

/// File name without folders and extension, without Foundation.
private func baseName(_ path: String) -> String {
    let last = path.split(separator: "/").last.map(String.init) ?? path
    if let dot = last.lastIndex(of: "."), dot != last.startIndex { return String(last[..<dot]) }
    return last
}
