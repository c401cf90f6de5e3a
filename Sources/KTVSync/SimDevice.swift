/// The simulator's devices: a player model and what each device keeps.

/// A player: position advances at `rate` while playing; a headphone lag holds it for a while.
struct SimPlayer {
    var playing = false
    var basePos: Double = 0
    var baseTau: Double = 0
    var rate: Double

    func position(at tau: Double) -> Double {
        playing ? basePos + rate * max(0, tau - baseTau) : basePos
    }

    mutating func seek(to p: Double, at tau: Double) {
        basePos = p
        baseTau = tau
    }

    mutating func play(at tau: Double) {
        basePos = position(at: tau)
        baseTau = tau
        playing = true
    }

    mutating func pause(at tau: Double) {
        basePos = position(at: tau)
        baseTau = tau
        playing = false
    }

    /// The output route changes: the player stops advancing for `lag` ms.
    mutating func hold(at tau: Double, for lag: Double) {
        basePos = position(at: tau)
        baseTau = tau + lag
    }
}

/// A message the lead sent: what it means (the numbers its payload carries, Unix epoch) and its JSON.
struct SimMessage {
    var proto: SyncProtocol
    var message: SyncMessage
    var json: [UInt8]
}

struct SimDevice {
    let cfg: Scenario.Device
    let name: [UInt8]
    let boot: Int
    /// NTP time (Unix ms) at true time 0.
    let base: Int
    var player: SimPlayer
    var joined = false
    var nextCallback: Int?
    var inbox: [(arrive: Int, message: Int)] = []
    var head = 0
    var lastArrival = Int.min
    /// The rules' state, as the device itself keeps it (the same bookkeeping replay does).
    var sync = ChorusState()
    var paused = false
    var startTau: Int?
    var lastDecisionTau = Int.min / 2
    var faults: [Scenario.Fault] = []
    var lossSpans: [Scenario.Span] = []
    // Truth: (follower NTP stamp, exact position) at each playing callback; audience lags.
    var samples: [(ntp: Int, pos: Double, tau: Int)] = []
    var lags: [Double] = []

    init(_ cfg: Scenario.Device, boot: Int, base: Int) {
        self.cfg = cfg
        name = LineWriter.quoted(cfg.name)
        self.boot = boot
        self.base = base
        player = SimPlayer(rate: cfg.rate)
        sync.playoutDelayMs = cfg.playoutDelayMs
    }

    /// What the device's NTP clock reads at true time `tau`.
    func ntp(_ tau: Int) -> Int { base + Int((Double(tau) + cfg.clockErrorMs).rounded()) }
    func at(_ tau: Int) -> Int { tau + boot }
    /// The first whole true millisecond at which this device's clock reads `ntp` or later.
    func tau(whenClockReads ntp: Int) -> Int { Int((Double(ntp - base) - cfg.clockErrorMs).rounded(.up)) }
}
