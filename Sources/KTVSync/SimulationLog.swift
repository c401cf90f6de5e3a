/// What the simulated devices log: one JSON Lines event per call, written straight into the buffer,
/// and the lead's messages (encoded by the rule set's codec, delivered after each receiver's delay).
extension Simulation {
    mutating func begin(_ d: Int, _ tau: Int, _ kind: StaticString) {
        w.begin(device: devices[d].name, at: devices[d].at(tau), ntp: devices[d].ntp(tau), kind: kind)
    }

    /// Builds the fields of a truth object (before the mutating write, so they may read the state).
    static func fields(_ build: (inout LineWriter) -> Void) -> [UInt8] {
        var f = LineWriter()
        build(&f)
        return f.bytes
    }

    mutating func truth(_ d: Int, _ tau: Int, _ fields: [UInt8]) {
        begin(d, tau, "truth")
        w.raw(",\"truth\":{")
        w.raw(fields)
        w.raw("}")
        w.end()
    }

    mutating func logProgress(_ d: Int, _ tau: Int, _ pos: Int, _ state: PlayerState) {
        begin(d, tau, "progress")
        w.raw(",\"position\":")
        w.int(pos)
        w.raw(state == .playing ? ",\"state\":\"playing\"" : state == .paused ? ",\"state\":\"paused\"" : ",\"state\":\"stopped\"")
        w.end()
    }

    mutating func logSimple(_ d: Int, _ tau: Int, _ kind: StaticString) {
        begin(d, tau, kind)
        w.end()
    }

    mutating func logSeek(_ d: Int, _ tau: Int, _ to: Int) {
        begin(d, tau, "seek")
        w.raw(",\"to\":")
        w.int(to)
        w.end()
        devices[d].player.seek(to: Double(to), at: Double(tau))
        devices[d].sync.seeked()
        if d == leadIndex { leadHistory.append((Double(tau), devices[d].player)) }
    }

    mutating func logSchedule(_ d: Int, _ tau: Int, _ startNtp: Int) {
        begin(d, tau, "schedule")
        w.raw(",\"start_ntp\":")
        w.int(startNtp)
        w.end()
        devices[d].sync.scheduled(startNtpMs: startNtp)
        devices[d].startTau = devices[d].tau(whenClockReads: startNtp) + Int.random(in: 0...devices[d].cfg.startLatencyMs, using: &rng)
    }

    /// The lead broadcasts: one `send` line, then delivery to each receiver in order, after its
    /// network delay, unless a loss fault drops it.
    mutating func broadcast(_ tau: Int, _ message: SyncMessage, to roles: Set<DeviceRole>) {
        var json = LineWriter()
        rules.encode(message, ntp1900: s.ntp1900, into: &json)
        let m = SimMessage(proto: rules.wireProtocol, message: message, json: json.bytes)
        messages.append(m)
        let index = messages.count - 1
        begin(leadIndex, tau, "send")
        w.raw(",\"protocol\":\"")
        w.raw(Array(m.proto.rawValue.utf8))
        w.raw("\",\"message\":")
        w.raw(m.json)
        w.end()
        for d in devices.indices where d != leadIndex && devices[d].joined && roles.contains(devices[d].cfg.role) {
            let c = devices[d].cfg
            let arrive = max(devices[d].lastArrival, tau + c.netDelayMs + Int.random(in: 0...c.netJitterMs, using: &rng))
            if devices[d].lossSpans.contains(where: { arrive >= $0.atMs && arrive < $0.atMs + $0.durationMs }) { continue }
            devices[d].lastArrival = arrive
            devices[d].inbox.append((arrive, index))
        }
    }

    /// A device logs a message it received.
    mutating func logReceived(_ d: Int, _ tau: Int, _ m: SimMessage) {
        begin(d, tau, "recv")
        w.raw(",\"protocol\":\"")
        w.raw(Array(m.proto.rawValue.utf8))
        w.raw("\",\"from\":")
        w.raw(devices[leadIndex].name)
        w.raw(",\"message\":")
        w.raw(m.json)
        w.end()
    }
}
