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
