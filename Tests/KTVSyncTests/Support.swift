import KTVCore
@testable import KTVSync

/// Builds progress-log lines by hand. `at` equals `ntp` unless given: the device clock and its
/// NTP belief then agree, so every number in a test can be checked by eye.
struct LogBuilderForTests {
    var lines: [String] = []

    mutating func add(_ device: String, _ ntp: Int, _ kind: String, _ extra: String = "", at: Int? = nil, ntpField: Bool = true) {
        var s = "{\"device\":\"\(device)\",\"at\":\(at ?? ntp)"
        if ntpField { s += ",\"ntp\":\(ntp)" }
        s += ",\"kind\":\"\(kind)\""
        if !extra.isEmpty { s += "," + extra }
        s += "}"
        lines.append(s)
    }

    mutating func role(_ device: String, _ role: String, at ntp: Int = 0, _ extra: String = "") {
        add(device, ntp, "role", "\"role\":\"\(role)\"" + (extra.isEmpty ? "" : "," + extra))
    }

    mutating func progress(_ device: String, _ ntp: Int, _ position: Int, _ state: String = "playing") {
        add(device, ntp, "progress", "\"position\":\(position),\"state\":\"\(state)\"")
    }

    mutating func seek(_ device: String, _ ntp: Int, to: Int) { add(device, ntp, "seek", "\"to\":\(to)") }

    mutating func command(_ device: String, _ ntp: Int, _ kind: String) { add(device, ntp, kind) }

    mutating func schedule(_ device: String, _ ntp: Int, start: Int) { add(device, ntp, "schedule", "\"start_ntp\":\(start)") }

    /// A ZEGO progress SEI from the lead (kState 1 playing, 2 paused).
    mutating func zegoSEI(_ device: String, _ ntp: Int, p: Int, t: Int, state: Int = 1) {
        add(device, ntp, "recv", "\"protocol\":\"zego\",\"from\":\"lead\",\"message\":{\"kTotalKey\":240000,\"kState\":\(state),\"kRole\":1,\"kProgressKey\":\(p),\"kPointTimeKey\":\(t),\"kResourceID\":\"s\"}")
    }

    mutating func zegoStart(_ device: String, _ ntp: Int, start: Int) {
        add(device, ntp, "recv", "\"protocol\":\"zego\",\"from\":\"lead\",\"message\":{\"message\":\"Mediaplayer-StartInFuture\",\"kStartTime\":\(start),\"kBehaviorType\":0,\"kResourceID\":\"s\"}")
    }

    mutating func agoraLrc(_ device: String, _ ntp: Int, time: Int, real: Int, stamp: Int, state: Int = 3, duration: Int = 240_000) {
        add(device, ntp, "recv", "\"protocol\":\"agora\",\"from\":\"lead\",\"message\":{\"cmd\":\"setLrcTime\",\"duration\":\(duration),\"time\":\(time),\"realTime\":\(real),\"ntp\":\(stamp),\"playerState\":\(state),\"songIdentifier\":\"s\",\"ver\":2}")
    }

    mutating func tencentStart(_ device: String, _ ntp: Int, start: Int, duration: String = "\"240000\"") {
        add(device, ntp, "recv", "\"protocol\":\"tencent\",\"from\":\"lead\",\"message\":{\"cmd\":\"startChorus\",\"startPlayMusicTS\":\(start),\"music_id\":\"s\",\"music_duration\":\(duration)}")
    }

    var bytes: [UInt8] { Array((lines.joined(separator: "\n") + "\n").utf8) }

    func log() throws -> ReplayLog { try LogReader.read(bytes: bytes, name: "test.jsonl") }

    func replay(_ configure: (inout ReplayConfiguration) -> Void = { _ in }) throws -> ReplayReport {
        var c = ReplayConfiguration()
        configure(&c)
        return Replay.analyze(try log(), configuration: c)
    }
}

/// The error a log gives, or nil when it reads.
func readError(_ text: String, name: String = "bad.jsonl") -> SyncError? {
    do {
        _ = try LogReader.read(bytes: Array(text.utf8), name: name)
        return nil
    } catch {
        return error
    }
}
