import KTVCore

/// The event model of a progress log (docs/progress-log.md). Times are integer milliseconds.

public enum DeviceRole: String, Sendable, CaseIterable {
    case lead, chorus, audience
}

public enum PlayerState: String, Sendable, CaseIterable {
    case playing, paused, stopped
}

public enum PlayerCommand: String, Sendable, CaseIterable {
    case play, pause, resume, stop
}

public enum SyncProtocol: String, Sendable, CaseIterable {
    case zego, agora, tencent, volcano
}

/// The part of a vendor payload the sync rules use, the same whatever the vendor.
public struct RemoteProgress: Sendable, Equatable {
    /// The sender's player position at `ntpMs` (ZEGO `kProgressKey`, Agora `realTime`).
    public var positionMs: Int
    /// The position the receiver should start from: Agora's `time` (position minus the sender's
    /// playout delay); equal to `positionMs` for ZEGO.
    public var timeMs: Int
    /// NTP time of that position (ZEGO `kPointTimeKey`, Agora `ntp`), Unix epoch.
    public var ntpMs: Int
    public var state: PlayerState?
    public var durationMs: Int?

    public init(positionMs: Int, timeMs: Int? = nil, ntpMs: Int, state: PlayerState? = .playing, durationMs: Int? = nil) {
        self.positionMs = positionMs
        self.timeMs = timeMs ?? positionMs
        self.ntpMs = ntpMs
        self.state = state
        self.durationMs = durationMs
    }
}

/// A vendor payload, normalized.
public enum SyncMessage: Sendable, Equatable {
    /// ZEGO progress SEI, Agora `setLrcTime`.
    case progress(RemoteProgress)
    /// ZEGO `Mediaplayer-StartInFuture`, Tencent `startChorus`: play from 0 at this NTP time.
    case start(startNtpMs: Int, durationMs: Int?)
    /// Tencent `stopChorus`.
    case stop(requestNtpMs: Int)
    /// A position for display only, with no NTP stamp (Tencent audience SEI, Volcano).
    case display(positionMs: Int)
    /// A payload the rules do not use (Agora `PlayerState`, `setVoicePitch` …).
    case other
}

public enum EventBody: Sendable, Equatable {
    case role(DeviceRole)
    case progress(positionMs: Int, state: PlayerState, durationMs: Int?)
    case send(SyncProtocol)
    case recv(SyncProtocol, from: Int?, SyncMessage)
    case schedule(startNtpMs: Int)
    case seek(toMs: Int)
    case command(PlayerCommand)
    case record(start: Bool)
    /// Index into `ReplayLog.truths`.
    case truth(Int)
}

/// Where an event came from: index into `ReplayLog.files` and the 1-based line.
public struct SourceRef: Sendable, Equatable {
    public var file: Int32
    public var line: Int32

    public init(file: Int, line: Int) {
        self.file = Int32(truncatingIfNeeded: file)
        self.line = Int32(truncatingIfNeeded: line)
    }
}

public struct LogEvent: Sendable, Equatable {
    /// The device's monotonic clock.
    public var atMs: Int
    /// NTP time (Unix epoch) as the device believed it; inferred from `at` when the line had none.
    public var ntpMs: Int
    public var ntpGiven: Bool
    public var body: EventBody
    /// The device's audio playout delay from this event on (`playout_delay`, Agora); -1 = not given.
    public var playoutDelayMs: Int32
    public var source: SourceRef

    public init(atMs: Int, ntpMs: Int?, body: EventBody, playoutDelayMs: Int? = nil, source: SourceRef = SourceRef(file: 0, line: 0)) {
        self.atMs = atMs
        self.ntpMs = ntpMs ?? 0
        self.ntpGiven = ntpMs != nil
        self.body = body
        self.playoutDelayMs = Int32(truncatingIfNeeded: playoutDelayMs ?? -1)
        self.source = source
    }

    public var isPlayingProgress: Bool {
        if case .progress(_, .playing, _) = body { return true }
        return false
    }
}

/// One device's events in its own order (by `at`, file order breaking ties).
public struct DeviceLog: Sendable {
    public var name: String
    public var events: [LogEvent] = []
    /// `send` events are counted, not kept: the rules never need them.
    public var sendCount = 0
    public var eventCount = 0
    /// False when the device logged no `ntp` at all: it cannot take part in the sync math.
    public var hasNTP = true

    public init(name: String) { self.name = name }
}

/// A ground-truth record written by the simulator.
public struct TruthRecord: Sendable {
    public var device: String
    public var ntpMs: Int?
    public var value: JSONValue
}

/// Something replay noticed about the log itself (out of order lines, inferred times, ignored payloads).
public struct LogNote: Sendable, Equatable {
    public var rule: String
    public var file: String?
    public var line: Int?
    public var message: String

    public init(rule: String, file: String? = nil, line: Int? = nil, message: String) {
        self.rule = rule
        self.file = file
        self.line = line
        self.message = message
    }

    public var text: String {
        var loc = ""
        if let file { loc = file + (line.map { ":\($0)" } ?? "") + ": " }
        return "\(loc)warning: \(message) [\(rule)]"
    }
}

/// A whole log, read and put in order.
public struct ReplayLog: Sendable {
    public var files: [String]
    public var devices: [DeviceLog]
    public var truths: [TruthRecord]
    public var notes: [LogNote]
    /// Every event line read, `send` and `truth` included.
    public var eventCount: Int

    public init(files: [String] = [], devices: [DeviceLog] = [], truths: [TruthRecord] = [], notes: [LogNote] = [], eventCount: Int = 0) {
        self.files = files
        self.devices = devices
        self.truths = truths
        self.notes = notes
        self.eventCount = eventCount
    }

    public func deviceIndex(_ name: String) -> Int? { devices.firstIndex { $0.name == name } }

    public func sourceText(_ s: SourceRef) -> String {
        let f = Int(s.file)
        return (f >= 0 && f < files.count ? files[f] : "?") + ":\(s.line)"
    }
}
