import KTVCore

/// One decoded line.
enum DecodedLine {
    case event(device: Int, LogEvent)
    case send(device: Int)
    case truth(device: Int, ntpMs: Int?, JSONValue)
}

/// Decodes one JSON Lines event (docs/progress-log.md) into the model, checking every field the
/// rules need; a wrong or missing field is an error naming the line and the field. A line is read
/// in three steps: its top-level fields as byte ranges (`RawEvent.scan`), the fields every event has
/// (`header`), then the fields of its kind (`body`); vendor payloads go to their codec.
struct EventDecoder {
    var devices = DeviceInterner()
    var notes = NoteCounter()

    static let kinds = "role, progress, send, recv, schedule, seek, play, pause, resume, stop, record, truth"

    mutating func decode(_ buf: UnsafeBufferPointer<UInt8>, file: Int, fileName: String, line: Int) throws(SyncError) -> DecodedLine {
        let place = LinePlace(fileName: fileName, line: line)
        var s = JSONReader(buf)
        let raw = try RawEvent.scan(&s, place)
        let head = try header(raw, s, place, file: file)
        return try body(raw, head, s, place)
    }

    /// What every event carries.
    struct Header {
        var device: Int
        var atMs: Int
        var ntpMs: Int?
        var playoutDelayMs: Int?
        var source: SourceRef

        func event(_ body: EventBody) -> DecodedLine {
            .event(device: device, LogEvent(atMs: atMs, ntpMs: ntpMs, body: body, playoutDelayMs: playoutDelayMs, source: source))
        }
    }

    mutating func header(_ r: RawEvent, _ s: JSONReader, _ place: LinePlace, file: Int) throws(SyncError) -> Header {
        guard let device = r.device else { throw place.malformed("device", "missing; every event needs `device`, `at` and `kind`") }
        guard device.end > device.start else { throw place.malformed("device", "is empty; name the device that logged the event") }
        guard r.kind != nil else { throw place.malformed("kind", "missing; use one of \(Self.kinds)") }
        guard let at = r.at else { throw place.malformed("at", "missing; every event needs the device's monotonic time `at` in ms") }
        let atMs = try place.ms(at, "at")
        let ntpMs = try r.ntp.map { n throws(SyncError) in NTPTime.unixMs(try place.ms(n, "ntp")) }
        let id = devices.id(s, device)
        let delayMs = try r.delay.map { n throws(SyncError) in try place.ms(n, "playout_delay") }
        if let d = delayMs, d < 0 || d > 10_000 { throw place.malformed("playout_delay", "\(d) ms is not a playout delay (0-10000 ms)") }
        return Header(device: id, atMs: atMs, ntpMs: ntpMs, playoutDelayMs: delayMs, source: SourceRef(file: file, line: place.line))
    }

    mutating func body(_ r: RawEvent, _ h: Header, _ s: JSONReader, _ place: LinePlace) throws(SyncError) -> DecodedLine {
        let kind = r.kind!
        // The common kinds are recognized from the raw bytes; a String is made only for the rest.
        let kindName: String
        if s.keyEquals(kind, "progress") { kindName = "progress" }
        else if s.keyEquals(kind, "recv") { kindName = "recv" }
        else if s.keyEquals(kind, "send") { kindName = "send" }
        else { kindName = s.makeString(kind) }
        switch kindName {
        case "progress": return try progress(r, h, s, place)
        case "role":
            guard let role = r.role else { throw place.malformed("role", "missing; use lead, chorus or audience") }
            let name = s.makeString(role)
            guard let value = DeviceRole(rawValue: name) else { throw place.malformed("role", "unknown role \(quoted(name)); use lead, chorus or audience") }
            return h.event(.role(value))
        case "send":
            _ = try syncProtocol(r, s, place)
            return .send(device: h.device)
        case "recv": return try recv(r, h, s, place)
        case "schedule":
            guard let startNtp = r.startNtp else { throw place.malformed("start_ntp", "missing; a schedule event carries the NTP time playback starts") }
            return h.event(.schedule(startNtpMs: NTPTime.unixMs(try place.ms(startNtp, "start_ntp"))))
        case "seek":
            guard let to = r.to else { throw place.malformed("to", "missing; a seek event carries the target position in ms") }
            let t = try place.ms(to, "to")
            if t < 0 { throw place.malformed("to", "\(t) is negative; a seek target is 0 or more") }
            if let p = SongBounds.timeProblem(ms: t) { throw place.malformed("to", "\(p)") }
            return h.event(.seek(toMs: t))
        case "play": return h.event(.command(.play))
        case "pause": return h.event(.command(.pause))
        case "resume": return h.event(.command(.resume))
        case "stop": return h.event(.command(.stop))
        case "record":
            guard let action = r.action else { throw place.malformed("action", "missing; use start or stop") }
            let a = s.makeString(action)
            guard a == "start" || a == "stop" else { throw place.malformed("action", "unknown action \(quoted(a)); use start or stop") }
            return h.event(.record(start: a == "start"))
        case "truth": return try truth(r, h, s, place)
        default:
            throw place.malformed("kind", "unknown kind \(quoted(kindName)); use one of \(Self.kinds)")
        }
    }

    mutating func progress(_ r: RawEvent, _ h: Header, _ s: JSONReader, _ place: LinePlace) throws(SyncError) -> DecodedLine {
        guard let position = r.position else { throw place.malformed("position", "missing; a progress event carries the player position in ms") }
        guard let state = r.state else { throw place.malformed("state", "missing; use playing, paused or stopped") }
        let st: PlayerState
        if s.keyEquals(state, "playing") { st = .playing } else {
            let name = s.makeString(state)
            guard let other = PlayerState(rawValue: name) else { throw place.malformed("state", "unknown state \(quoted(name)); use playing, paused or stopped") }
            st = other
        }
        let pos = try place.ms(position, "position")
        if pos < 0 { throw place.malformed("position", "\(pos) is negative; a player position is 0 or more") }
        if let p = SongBounds.timeProblem(ms: pos) { throw place.malformed("position", "\(p)") }
        if h.ntpMs == nil { notes.add("ntp-inferred", key: "progress", file: place.fileName, line: place.line, "a progress event has no `ntp`; its NTP time is inferred from `at`") }
        let duration = try r.duration.map { n throws(SyncError) in try place.ms(n, "duration") }
        return h.event(.progress(positionMs: pos, state: st, durationMs: duration))
    }

    /// A received vendor message: the sender, then the payload read by its vendor's codec.
    mutating func recv(_ r: RawEvent, _ h: Header, _ s: JSONReader, _ place: LinePlace) throws(SyncError) -> DecodedLine {
        let p = try syncProtocol(r, s, place)
        guard r.messageAt >= 0 else { throw place.malformed("message", "missing; a recv event carries the vendor payload") }
        var fromId: Int?
        if let from = r.from { fromId = devices.id(s, from) }
        if h.ntpMs == nil { notes.add("ntp-inferred", key: "recv", file: place.fileName, line: place.line, "a recv event has no `ntp`; its NTP time is inferred from `at`") }
        let fields = try PayloadFields.read(s, at: r.messageAt, fileName: place.fileName, line: place.line)
        let message = try p.codec.decode(fields, notes: &notes)
        return h.event(.recv(p, from: fromId, message))
    }

    func truth(_ r: RawEvent, _ h: Header, _ s: JSONReader, _ place: LinePlace) throws(SyncError) -> DecodedLine {
        guard r.truthAt >= 0 else { throw place.malformed("truth", "missing; a truth event carries an object") }
        var t = s
        t.offset = r.truthAt
        let v: JSONValue
        do { v = try t.value() } catch { throw place.malformed("truth", error.message) }
        guard case .object = v else { throw place.malformed("truth", "must be an object") }
        return .truth(device: h.device, ntpMs: h.ntpMs, v)
    }

    func syncProtocol(_ r: RawEvent, _ s: JSONReader, _ place: LinePlace) throws(SyncError) -> SyncProtocol {
        guard let proto = r.proto else { throw place.malformed("protocol", "missing; use zego, agora, tencent or volcano") }
        let name = s.makeString(proto)
        guard let p = SyncProtocol(rawValue: name) else { throw place.malformed("protocol", "unknown protocol \(quoted(name)); use zego, agora, tencent or volcano") }
        return p
    }
}

/// The file and line being decoded, for the errors that name them.
struct LinePlace {
    let fileName: String
    let line: Int

    func malformed(_ field: String?, _ detail: String) -> SyncError {
        .malformedLog(file: fileName, line: line, field: field, detail: detail)
    }

    /// Milliseconds, bounded well inside Int so that sums and differences of times cannot overflow.
    func ms(_ n: JSONNumber, _ field: String) throws(SyncError) -> Int {
        if let v = n.integer {
            guard v > -9_000_000_000_000_000, v < 9_000_000_000_000_000 else { throw malformed(field, "\(v) is out of range for milliseconds") }
            return v
        }
        guard n.double.isFinite, abs(n.double) < 9e15 else { throw malformed(field, "\(n.double) is out of range for milliseconds") }
        return Int(n.double.rounded())
    }
}

/// The top-level fields of one event line as byte ranges and numbers, before anything is decoded.
struct RawEvent {
    var device: JSONReader.StringRange?, kind: JSONReader.StringRange?, role: JSONReader.StringRange?, state: JSONReader.StringRange?
    var proto: JSONReader.StringRange?, from: JSONReader.StringRange?, action: JSONReader.StringRange?
    var at: JSONNumber?, ntp: JSONNumber?, position: JSONNumber?, duration: JSONNumber?
    var startNtp: JSONNumber?, to: JSONNumber?, delay: JSONNumber?
    /// Where the `message` and `truth` values start (-1: absent); they are read only when the kind needs them.
    var messageAt = -1, truthAt = -1

    static let knownKeys: Set<String> = ["at", "to", "ntp", "kind", "role", "from", "state", "truth", "device", "action", "message",
                                         "position", "duration", "protocol", "start_ntp", "playout_delay"]

    /// Reads the object member by member; a syntax error names the column, a mistyped field its name.
    /// One loop in one function: it runs for every member of a million lines, and the scanner's
    /// small functions inline into it.
    static func scan(_ s: inout JSONReader, _ place: LinePlace) throws(SyncError) -> RawEvent {
        var r = RawEvent()
        do {
            if try s.enterObject("`{` (each line must be one JSON object)") {
                repeat {
                    let key = try s.memberName()
                    let c = s.peek()
                    func num(_ name: String, nullable: Bool = false) throws -> JSONNumber? {
                        if nullable, c == 0x6E { try s.literal("null"); return nil }
                        guard let c, c == 0x2D || (c >= 0x30 && c <= 0x39) else { throw place.malformed(name, "must be a number of milliseconds, not \(typeName(c))") }
                        return try s.number()
                    }
                    func str(_ name: String) throws -> JSONReader.StringRange {
                        guard c == 0x22 else { throw place.malformed(name, "must be a string, not \(typeName(c))") }
                        return try s.stringRange()
                    }
                    switch key.end - key.start {
                    case 2 where s.keyEquals(key, "at"): r.at = try num("at")
                    case 2 where s.keyEquals(key, "to"): r.to = try num("to")
                    case 3 where s.keyEquals(key, "ntp"): r.ntp = try num("ntp", nullable: true)
                    case 4 where s.keyEquals(key, "kind"): r.kind = try str("kind")
                    case 4 where s.keyEquals(key, "role"): r.role = try str("role")
                    case 4 where s.keyEquals(key, "from"): r.from = try str("from")
                    case 5 where s.keyEquals(key, "state"): r.state = try str("state")
                    case 5 where s.keyEquals(key, "truth"): r.truthAt = s.offset; try s.skipValue()
                    case 6 where s.keyEquals(key, "device"): r.device = try str("device")
                    case 6 where s.keyEquals(key, "action"): r.action = try str("action")
                    case 7 where s.keyEquals(key, "message"): r.messageAt = s.offset; try s.skipValue()
                    case 8 where s.keyEquals(key, "position"): r.position = try num("position")
                    case 8 where s.keyEquals(key, "duration"): r.duration = try num("duration", nullable: true)
                    case 8 where s.keyEquals(key, "protocol"): r.proto = try str("protocol")
                    case 9 where s.keyEquals(key, "start_ntp"): r.startNtp = try num("start_ntp")
                    case 13 where s.keyEquals(key, "playout_delay"): r.delay = try num("playout_delay", nullable: true)
                    default:
                        // Escaped keys are legal JSON; compare them decoded.
                        if key.escaped {
                            let name = s.makeString(key)
                            if knownKeys.contains(name) { throw place.malformed(name, "write the key without escapes") }
                        }
                        try s.skipValue()
                    }
                } while try s.nextMember()
            }
            try s.expectEnd("the end of the line after the object (one event per line)")
        } catch let e as SyncError {
            throw e
        } catch let e as JSONReadError {
            throw place.malformed(nil, "not a JSON object: at column \(e.byteOffset + 1): \(e.message)")
        } catch {
            throw place.malformed(nil, "\(error)")
        }
        return r
    }

    static func typeName(_ c: UInt8?) -> String {
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
}
