import KTVCore

/// Gives each device name a small number, comparing the raw bytes so the common case allocates nothing.
struct DeviceInterner {
    var names: [String] = []
    private var keys: [[UInt8]] = []
    private var last = -1

    private var index: [String: Int] = [:]

    mutating func id(_ s: JSONScanner, _ r: (start: Int, end: Int, escaped: Bool)) throws(ScanError) -> Int {
        if r.escaped { return id(named: try s.makeString(r)) }
        let n = r.end - r.start
        // Lines usually alternate between a few devices: try the last one, then a short scan
        // without allocating; a log with many names goes through the dictionary.
        if last >= 0, equal(keys[last], s, r.start, n) { return last }
        if keys.count <= 16 {
            for k in 0..<keys.count where equal(keys[k], s, r.start, n) { last = k; return k }
        }
        last = id(named: String(decoding: UnsafeBufferPointer(rebasing: s.p[r.start..<r.end]), as: UTF8.self))
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
    private func equal(_ key: [UInt8], _ s: JSONScanner, _ start: Int, _ n: Int) -> Bool {
        guard key.count == n else { return false }
        return key.withUnsafeBufferPointer { k in
            for j in 0..<n where k[j] != s.p[start + j] { return false }
            return true
        }
    }
}

/// Findings about the log that would repeat on many lines: counted, reported once with the first place.
struct NoteCounter {
    private var order: [String] = []
    private var entries: [String: (count: Int, file: String, line: Int, message: String)] = [:]

    mutating func add(_ rule: String, key: String? = nil, file: String, line: Int, _ message: @autoclosure () -> String) {
        let k = rule + "\u{1}" + (key ?? "")
        if let e = entries[k] {
            entries[k] = (e.count + 1, e.file, e.line, e.message)
        } else {
            order.append(k)
            entries[k] = (1, file, line, message())
        }
    }

    var notes: [LogNote] {
        order.map { k in
            let e = entries[k]!
            let rule = String(k.split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let more = e.count > 1 ? " (\(e.count) lines like this; the first is shown)" : ""
            return LogNote(rule: rule, file: e.file, line: e.line, message: e.message + more)
        }
    }
}

/// One decoded line.
enum DecodedLine {
    case event(device: Int, LogEvent)
    case send(device: Int)
    case truth(device: Int, ntpMs: Int?, JSONValue)
}

/// Decodes one JSON Lines event (docs/progress-log.md) into the model, checking every field the
/// rules need; a wrong or missing field is an error naming the line and the field.
struct EventDecoder {
    var devices = DeviceInterner()
    var notes = NoteCounter()

    static let kinds = "role, progress, send, recv, schedule, seek, play, pause, resume, stop, record, truth"

    /// Keys of the vendor payloads that carry numbers.
    enum MKey: Int, CaseIterable {
        case kProgressKey, kPointTimeKey, kState, kTotalKey, kStartTime, time, realTime, ntp, playerState,
             duration, startPlayMusicTS, music_duration, requestStopTS, musicCurrentTS, progress
    }

    /// A vendor payload's fields; numbers may be written as strings (iOS sends some that way).
    struct MessageFields {
        var numbers = [Double](repeating: .nan, count: MKey.allCases.count)
        var bad: UInt32 = 0
        var cmd: String?
        var message: String?

        func has(_ k: MKey) -> Bool { !numbers[k.rawValue].isNaN || bad & (1 << UInt32(k.rawValue)) != 0 }
    }

    mutating func decode(_ buf: UnsafeBufferPointer<UInt8>, file: Int, fileName: String, line: Int) throws(SyncError) -> DecodedLine {
        var s = JSONScanner(buf)
        func malformed(_ field: String?, _ detail: String) -> SyncError {
            .malformedLog(file: fileName, line: line, field: field, detail: detail)
        }
        func syntax(_ e: ScanError) -> SyncError {
            malformed(nil, "not a JSON object: at column \(e.offset + 1): \(e.message)")
        }
        typealias Range = (start: Int, end: Int, escaped: Bool)
        var deviceR: Range?
        var kindR: Range?
        var at: ScannedNumber?
        var ntp: ScannedNumber?
        var role: Range?, state: Range?, proto: Range?, from: Range?, action: Range?
        var position: ScannedNumber?, duration: ScannedNumber?, startNtp: ScannedNumber?, to: ScannedNumber?, delay: ScannedNumber?
        var messageAt = -1, truthAt = -1

        func typeName(_ c: UInt8?) -> String {
            switch c {
            case 0x22: return "a string"
            case 0x7B: return "an object"
            case 0x5B: return "an array"
            case 0x74, 0x66: return "a boolean"
            case 0x6E: return "null"
            case nil: return "nothing"
            default: return "a number"
            }
        }
        func isNumberStart(_ c: UInt8?) -> Bool { c.map { $0 == 0x2D || ($0 >= 0x30 && $0 <= 0x39) } ?? false }

        do {
            try s.expect(0x7B, "`{` (each line must be one JSON object)")
            if s.peek() == 0x7D {
                s.i += 1
            } else {
                while true {
                    let key = try s.stringRange()
                    try s.expect(0x3A, "`:` after a key")
                    let c = s.peek()
                    func num(_ name: String, nullable: Bool = false) throws -> ScannedNumber? {
                        if nullable, c == 0x6E { try s.literal("null"); return nil }
                        guard isNumberStart(c) else { throw malformed(name, "must be a number of milliseconds, not \(typeName(c))") }
                        return try s.number()
                    }
                    func str(_ name: String) throws -> Range {
                        guard c == 0x22 else { throw malformed(name, "must be a string, not \(typeName(c))") }
                        return try s.stringRange()
                    }
                    do {
                        switch key.end - key.start {
                        case 2 where s.keyEquals(key, "at"): at = try num("at")
                        case 2 where s.keyEquals(key, "to"): to = try num("to")
                        case 3 where s.keyEquals(key, "ntp"): ntp = try num("ntp", nullable: true)
                        case 4 where s.keyEquals(key, "kind"): kindR = try str("kind")
                        case 4 where s.keyEquals(key, "role"): role = try str("role")
                        case 4 where s.keyEquals(key, "from"): from = try str("from")
                        case 5 where s.keyEquals(key, "state"): state = try str("state")
                        case 5 where s.keyEquals(key, "truth"): truthAt = s.i; try s.skipValue()
                        case 6 where s.keyEquals(key, "device"): deviceR = try str("device")
                        case 6 where s.keyEquals(key, "action"): action = try str("action")
                        case 7 where s.keyEquals(key, "message"): messageAt = s.i; try s.skipValue()
                        case 8 where s.keyEquals(key, "position"): position = try num("position")
                        case 8 where s.keyEquals(key, "duration"): duration = try num("duration", nullable: true)
                        case 8 where s.keyEquals(key, "protocol"): proto = try str("protocol")
                        case 9 where s.keyEquals(key, "start_ntp"): startNtp = try num("start_ntp")
                        case 13 where s.keyEquals(key, "playout_delay"): delay = try num("playout_delay", nullable: true)
                        default:
                            if key.escaped {
                                // Escaped keys are legal JSON; compare them decoded.
                                let name = try s.makeString(key)
                                if ["at", "to", "ntp", "kind", "role", "from", "state", "truth", "device", "action", "message",
                                    "position", "duration", "protocol", "start_ntp", "playout_delay"].contains(name) {
                                    throw malformed(name, "write the key without escapes")
                                }
                            }
                            try s.skipValue()
                        }
                    } catch let e as SyncError {
                        throw e
                    } catch let e as ScanError {
                        throw e
                    } catch {
                        throw malformed(nil, "\(error)")
                    }
                    guard let n = s.peek() else { throw s.fail("`,` or `}`") }
                    s.i += 1
                    if n == 0x7D { break }
                    if n != 0x2C { s.i -= 1; throw s.fail("`,` or `}`") }
                }
            }
            s.skipSpace()
            if !s.atEnd { throw s.fail("the end of the line after the object (one event per line)") }
        } catch let e as SyncError {
            throw e
        } catch let e as ScanError {
            throw syntax(e)
        } catch {
            throw malformed(nil, "\(error)")
        }

        func ms(_ n: ScannedNumber, _ field: String) throws(SyncError) -> Int {
            // Bounded well inside Int so that sums and differences of times cannot overflow.
            if let v = n.integer {
                guard v > -9_000_000_000_000_000, v < 9_000_000_000_000_000 else { throw malformed(field, "\(v) is out of range for milliseconds") }
                return v
            }
            guard n.double.isFinite, abs(n.double) < 9e15 else { throw malformed(field, "\(n.double) is out of range for milliseconds") }
            return Int(n.double.rounded())
        }
        func text(_ r: Range, _ field: String) throws(SyncError) -> String {
            do { return try s.makeString(r) } catch { throw malformed(field, error.message) }
        }

        guard let deviceR else { throw malformed("device", "missing; every event needs `device`, `at` and `kind`") }
        guard deviceR.end > deviceR.start else { throw malformed("device", "is empty; name the device that logged the event") }
        guard let kindR else { throw malformed("kind", "missing; use one of \(Self.kinds)") }
        guard let at else { throw malformed("at", "missing; every event needs the device's monotonic time `at` in ms") }
        let atMs = try ms(at, "at")
        let ntpMs = try ntp.map { n throws(SyncError) in NTPTime.unixMs(try ms(n, "ntp")) }
        let device: Int
        do { device = try devices.id(s, deviceR) } catch { throw malformed("device", error.message) }
        let delayMs = try delay.map { n throws(SyncError) in try ms(n, "playout_delay") }
        if let d = delayMs, d < 0 || d > 10_000 { throw malformed("playout_delay", "\(d) ms is not a playout delay (0-10000 ms)") }
        let src = SourceRef(file: file, line: line)

        func event(_ body: EventBody) -> DecodedLine {
            .event(device: device, LogEvent(atMs: atMs, ntpMs: ntpMs, body: body, playoutDelayMs: delayMs, source: src))
        }
        func syncProtocol() throws(SyncError) -> SyncProtocol {
            guard let proto else { throw malformed("protocol", "missing; use zego, agora, tencent or volcano") }
            let name = try text(proto, "protocol")
            guard let p = SyncProtocol(rawValue: name) else { throw malformed("protocol", "unknown protocol \(quoted(name)); use zego, agora, tencent or volcano") }
            return p
        }

        // The common kinds are recognized from the raw bytes; a String is made only for the rest.
        let kindName: String
        if s.keyEquals(kindR, "progress") { kindName = "progress" }
        else if s.keyEquals(kindR, "recv") { kindName = "recv" }
        else if s.keyEquals(kindR, "send") { kindName = "send" }
        else { kindName = try text(kindR, "kind") }
        switch kindName {
        case "progress":
            guard let position else { throw malformed("position", "missing; a progress event carries the player position in ms") }
            guard let state else { throw malformed("state", "missing; use playing, paused or stopped") }
            let st: PlayerState
            if s.keyEquals(state, "playing") { st = .playing } else {
                let stName = try text(state, "state")
                guard let other = PlayerState(rawValue: stName) else { throw malformed("state", "unknown state \(quoted(stName)); use playing, paused or stopped") }
                st = other
            }
            let pos = try ms(position, "position")
            if pos < 0 { throw malformed("position", "\(pos) is negative; a player position is 0 or more") }
            if ntpMs == nil { notes.add("ntp-inferred", key: "progress", file: fileName, line: line, "a progress event has no `ntp`; its NTP time is inferred from `at`") }
            return event(.progress(positionMs: pos, state: st, durationMs: try duration.map { n throws(SyncError) in try ms(n, "duration") }))
        case "role":
            guard let role else { throw malformed("role", "missing; use lead, chorus or audience") }
            let name = try text(role, "role")
            guard let r = DeviceRole(rawValue: name) else { throw malformed("role", "unknown role \(quoted(name)); use lead, chorus or audience") }
            return event(.role(r))
        case "send":
            _ = try syncProtocol()
            return .send(device: device)
        case "recv":
            let p = try syncProtocol()
            guard messageAt >= 0 else { throw malformed("message", "missing; a recv event carries the vendor payload") }
            var fromId: Int?
            if let from {
                do { fromId = try devices.id(s, from) } catch { throw malformed("from", error.message) }
            }
            if ntpMs == nil { notes.add("ntp-inferred", key: "recv", file: fileName, line: line, "a recv event has no `ntp`; its NTP time is inferred from `at`") }
            let fields = try messageFields(s, at: messageAt, fileName: fileName, line: line)
            let msg = try normalize(p, fields, fileName: fileName, line: line)
            return event(.recv(p, from: fromId, msg))
        case "schedule":
            guard let startNtp else { throw malformed("start_ntp", "missing; a schedule event carries the NTP time playback starts") }
            return event(.schedule(startNtpMs: NTPTime.unixMs(try ms(startNtp, "start_ntp"))))
        case "seek":
            guard let to else { throw malformed("to", "missing; a seek event carries the target position in ms") }
            let t = try ms(to, "to")
            if t < 0 { throw malformed("to", "\(t) is negative; a seek target is 0 or more") }
            return event(.seek(toMs: t))
        case "play": return event(.command(.play))
        case "pause": return event(.command(.pause))
        case "resume": return event(.command(.resume))
        case "stop": return event(.command(.stop))
        case "record":
            guard let action else { throw malformed("action", "missing; use start or stop") }
            let a = try text(action, "action")
            guard a == "start" || a == "stop" else { throw malformed("action", "unknown action \(quoted(a)); use start or stop") }
            return event(.record(start: a == "start"))
        case "truth":
            guard truthAt >= 0 else { throw malformed("truth", "missing; a truth event carries an object") }
            var t = s
            t.i = truthAt
            let v: JSONValue
            do { v = try t.value() } catch { throw malformed("truth", error.message) }
            guard case .object = v else { throw malformed("truth", "must be an object") }
            return .truth(device: device, ntpMs: ntpMs, v)
        default:
            throw malformed("kind", "unknown kind \(quoted(kindName)); use one of \(Self.kinds)")
        }
    }

    /// Reads the `message` value: an object, or a string holding one (payloads are often logged verbatim as text).
    private func messageFields(_ base: JSONScanner, at: Int, fileName: String, line: Int) throws(SyncError) -> MessageFields {
        var s = base
        s.i = at
        func malformed(_ detail: String) -> SyncError { .malformedLog(file: fileName, line: line, field: "message", detail: detail) }
        if s.peek() == 0x22 {
            let text: String
            do { text = try s.string() } catch { throw malformed(error.message) }
            let bytes = Array(text.utf8)
            var out = MessageFields()
            var failure: SyncError?
            bytes.withUnsafeBufferPointer { buf in
                var inner = JSONScanner(buf)
                do throws(ScanError) {
                    out = try Self.fields(&inner)
                    inner.skipSpace()
                    if !inner.atEnd { failure = malformed("the payload string has text after its JSON object") }
                } catch {
                    failure = malformed("the payload string is not a JSON object: at column \(error.offset + 1): \(error.message)")
                }
            }
            if let failure { throw failure }
            return out
        }
        guard s.peek() == 0x7B else { throw malformed("must be the vendor payload: a JSON object, or a string holding one") }
        do { return try Self.fields(&s) } catch { throw malformed(error.message) }
    }

    private static func fields(_ s: inout JSONScanner) throws(ScanError) -> MessageFields {
        var f = MessageFields()
        try s.expect(0x7B, "`{`")
        if s.peek() == 0x7D { s.i += 1; return f }
        while true {
            let key = try s.stringRange()
            try s.expect(0x3A, "`:`")
            if s.keyEquals(key, "cmd") {
                if s.peek() == 0x22 { f.cmd = try s.string() } else { try s.skipValue() }
            } else if s.keyEquals(key, "message") {
                if s.peek() == 0x22 { f.message = try s.string() } else { try s.skipValue() }
            } else if let k = MKey.allCases.first(where: { s.keyEquals(key, Self.name($0)) }) {
                let c = s.peek()
                if c == 0x22 {
                    let str = try s.string()
                    if let v = Double(str), v.isFinite { f.numbers[k.rawValue] = v } else { f.bad |= 1 << UInt32(k.rawValue) }
                } else if let c, c == 0x2D || (c >= 0x30 && c <= 0x39) {
                    f.numbers[k.rawValue] = try s.number().double
                } else {
                    try s.skipValue()
                    f.bad |= 1 << UInt32(k.rawValue)
                }
            } else {
                try s.skipValue()
            }
            guard let n = s.peek() else { throw s.fail("`,` or `}`") }
            s.i += 1
            if n == 0x7D { return f }
            if n != 0x2C { s.i -= 1; throw s.fail("`,` or `}`") }
        }
    }

    static func name(_ k: MKey) -> StaticString {
        switch k {
        case .kProgressKey: return "kProgressKey"
        case .kPointTimeKey: return "kPointTimeKey"
        case .kState: return "kState"
        case .kTotalKey: return "kTotalKey"
        case .kStartTime: return "kStartTime"
        case .time: return "time"
        case .realTime: return "realTime"
        case .ntp: return "ntp"
        case .playerState: return "playerState"
        case .duration: return "duration"
        case .startPlayMusicTS: return "startPlayMusicTS"
        case .music_duration: return "music_duration"
        case .requestStopTS: return "requestStopTS"
        case .musicCurrentTS: return "musicCurrentTS"
        case .progress: return "progress"
        }
    }

    /// The normalized message, or an error naming `message.<key>` when a payload the rules use lacks a number.
    private mutating func normalize(_ p: SyncProtocol, _ f: MessageFields, fileName: String, line: Int) throws(SyncError) -> SyncMessage {
        func need(_ k: MKey, _ what: String) throws(SyncError) -> Int {
            func field() -> String { "message.\(Self.name(k))" }
            if f.bad & (1 << UInt32(k.rawValue)) != 0 {
                throw .malformedLog(file: fileName, line: line, field: field(), detail: "must be a number (\(what))")
            }
            let v = f.numbers[k.rawValue]
            if v.isNaN { throw .malformedLog(file: fileName, line: line, field: field(), detail: "missing (\(what))") }
            guard abs(v) < 9e15 else { throw .malformedLog(file: fileName, line: line, field: field(), detail: "\(v) is out of range") }
            return Int(v.rounded())
        }
        func opt(_ k: MKey) -> Int? {
            let v = f.numbers[k.rawValue]
            return v.isNaN || abs(v) >= 9e15 ? nil : Int(v.rounded())
        }
        switch p {
        case .zego:
            if f.message == "Mediaplayer-StartInFuture" {
                return .start(startNtpMs: NTPTime.unixMs(try need(.kStartTime, "the NTP ms playback starts")), durationMs: opt(.kTotalKey))
            }
            if f.has(.kProgressKey) {
                let pos = try need(.kProgressKey, "the sender's progress in ms")
                let t = NTPTime.unixMs(try need(.kPointTimeKey, "the NTP ms of that progress"))
                var state: PlayerState?
                if let k = opt(.kState) { state = k == 1 ? .playing : k == 2 ? .paused : .stopped }
                return .progress(RemoteProgress(positionMs: pos, ntpMs: t, state: state, durationMs: opt(.kTotalKey)))
            }
            notes.add("payload-ignored", key: "zego", file: fileName, line: line, "a zego payload that is neither a progress SEI nor Mediaplayer-StartInFuture is ignored")
            return .other
        case .agora:
            if f.cmd == "setLrcTime" {
                let time = try need(.time, "position minus the sender's playout delay, in ms")
                guard f.has(.ntp) else {
                    notes.add("legacy-setlrctime", file: fileName, line: line, "a setLrcTime without `ntp` (the 2021-22 format) cannot be placed in time; ignored")
                    return .other
                }
                let n = NTPTime.unixMs(try need(.ntp, "the NTP ms of that position"))
                let real = f.has(.realTime) ? try need(.realTime, "the sender's position in ms") : time
                var state: PlayerState?
                if let k = opt(.playerState) { state = k == 3 ? .playing : k == 4 ? .paused : .stopped }
                return .progress(RemoteProgress(positionMs: real, timeMs: time, ntpMs: n, state: state, durationMs: opt(.duration)))
            }
            notes.add("payload-ignored", key: "agora-\(f.cmd ?? "")", file: fileName, line: line,
                      "agora `\(f.cmd ?? "(no cmd)")` messages do not drive the sync rules; ignored")
            return .other
        case .tencent:
            if f.cmd == "startChorus" {
                return .start(startNtpMs: NTPTime.unixMs(try need(.startPlayMusicTS, "the NTP ms playback starts")), durationMs: opt(.music_duration))
            }
            if f.cmd == "stopChorus" {
                return .stop(requestNtpMs: NTPTime.unixMs(try need(.requestStopTS, "the NTP ms of the stop request")))
            }
            if f.has(.musicCurrentTS) { return .display(positionMs: try need(.musicCurrentTS, "the lead's progress in ms")) }
            notes.add("payload-ignored", key: "tencent", file: fileName, line: line, "a tencent payload that is not startChorus, stopChorus or an audience SEI is ignored")
            return .other
        case .volcano:
            if f.has(.progress) { return .display(positionMs: try need(.progress, "the progress in ms")) }
            notes.add("payload-ignored", key: "volcano", file: fileName, line: line, "a volcano payload without `progress` is ignored")
            return .other
        }
    }
}
