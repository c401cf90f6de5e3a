import Foundation
import Testing
import KTVAudio
import KTVSynth

// Hostile input against the built binary (issue 8). Every test here runs `ktv` as a user would,
// so the same file can be pointed at an older binary with KTV_BIN to show what each test catches.

// MARK: - helpers

/// A canonical 16-bit PCM WAV, written byte by byte so any rate (even 1 Hz) can be made.
func wavBytes(rate: UInt32, channels: UInt16, frames: Int, sample: (Int, Int) -> Int16 = { _, _ in 0 }) -> [UInt8] {
    var b: [UInt8] = []
    func u32(_ v: UInt32) { b += withUnsafeBytes(of: v.littleEndian, Array.init) }
    func u16(_ v: UInt16) { b += withUnsafeBytes(of: v.littleEndian, Array.init) }
    let dataBytes = UInt32(frames * Int(channels) * 2)
    b += Array("RIFF".utf8); u32(36 + dataBytes); b += Array("WAVE".utf8)
    b += Array("fmt ".utf8); u32(16); u16(1); u16(channels); u32(rate); u32(rate * UInt32(channels) * 2)
    u16(channels * 2); u16(16)
    b += Array("data".utf8); u32(dataBytes)
    b.reserveCapacity(b.count + Int(dataBytes))
    for f in 0..<frames {
        for c in 0..<Int(channels) { b += withUnsafeBytes(of: sample(f, c).littleEndian, Array.init) }
    }
    return b
}

/// A generated dual-mono track (original left) of `seconds`, as a file of the given format.
func dualMonoTrack(_ s: Scratch, _ name: String, seconds: Double = 6, format: AudioFileFormat = .wav16) throws -> String {
    let voice = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...70, seed: 21), seconds: seconds, seed: 21)
    let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: 22)
    let mix = DualMonoMixer.mix(voice: voice.samples, accompaniment: acc, lagSamples: 100, gain: 0.8)
    let path = s.path(name)
    try AudioBuffer(sampleRate: 44100, channels: [mix.original, mix.accompaniment]).write(path: path, format: format)
    return path
}

/// The outcome of a child run under resource limits.
struct LimitedRun {
    var status: Int32?       // exit status, nil when killed by a signal
    var signal: Int32?
    var peakRSSBytes: Int
    var stderr: String
    var stdoutBytes: Int
}

/// Runs `ktv` under an address-space limit (RLIMIT_AS) and a CPU-time limit, and reads its peak RSS
/// from `getrusage(RUSAGE_CHILDREN)` in a small Python parent. (Spawning from this test process
/// would not do: Linux carries the spawning process's RSS high-water mark across `exec` into the
/// child's `ru_maxrss`, and the test runner is large.)
func ktvLimited(_ args: [String], addressSpaceMB: Int, cpuSeconds: Int = 120) throws -> LimitedRun {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-limited-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = dir.appendingPathComponent("out").path, err = dir.appendingPathComponent("err").path
    let report = dir.appendingPathComponent("report").path
    let script = """
    import resource, subprocess, sys
    limit, cpu, out, err, report = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    with open(out, 'wb') as o, open(err, 'wb') as e:
        p = subprocess.run(sys.argv[6:], stdout=o, stderr=e, stdin=subprocess.DEVNULL, preexec_fn=limits)
    open(report, 'w').write('%d %d' % (p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
    """
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", script, String(addressSpaceMB << 20), String(cpuSeconds), out, err, report,
                   KTVBinary.url.path] + args
    try p.run()
    p.waitUntilExit()
    let fields = try String(contentsOfFile: report, encoding: .utf8).split(separator: " ").compactMap { Int($0) }
    try #require(fields.count == 2, "the Python runner failed")
    let code = Int32(fields[0])
    let errText = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
    let outSize = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
    return LimitedRun(status: code >= 0 ? code : nil, signal: code < 0 ? -code : nil,
                      peakRSSBytes: fields[1] * 1024, stderr: errText, stdoutBytes: outSize)
}

/// Runs `ktv` with nothing on its standard input and kills it when it has not ended within
/// `seconds`: nil then (it hung, where it must answer promptly).
func ktvWithin(_ seconds: Double, _ args: [String]) throws -> Run? {
    let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-within-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: tmp) }
    let outURL = tmp.appendingPathComponent("out"), errURL = tmp.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    let p = Process()
    p.executableURL = KTVBinary.url
    p.arguments = args
    p.standardInput = FileHandle.nullDevice
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let deadline = Date().addingTimeInterval(seconds)
    while p.isRunning && Date() < deadline { usleep(20_000) }
    let hung = p.isRunning
    if hung { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    try out.close()
    try err.close()
    if hung { return nil }
    return Run(status: p.terminationStatus, stdout: [UInt8](try Data(contentsOf: outURL)),
               stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
}

func fileType(_ path: String) -> mode_t {
    var st = stat()
    guard lstat(path, &st) == 0 else { return 0 }
    return st.st_mode & S_IFMT
}

// MARK: - 1. a folder where audio is expected

@Suite struct FolderAsAudioTests {
    @Test func everyAudioInputRefusesAFolderWithExit74() throws {
        let s = try Scratch()
        let dir = s.path("a-folder.wav")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let take = try dualMonoTrack(s, "take.wav", seconds: 2)
        let lyric = try s.write("song.krc", goodKRC)
        let runs: [[String]] = [
            ["pitch", dir],
            ["split", dir, "--out-dir", s.path("o")],
            ["lyrics", "validate", lyric, "--audio", dir],
            ["pitch", take, "--accompaniment", dir],
        ]
        for args in runs {
            let r = try ktv(args)
            #expect(r.status == 74, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("\(dir): cannot read audio: is a folder, not an audio file"), "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.path("o")))
    }
}

// MARK: - 2. standard output that cannot be written

@Suite struct StandardOutputTests {
    @Test func aFullDeviceIsExit74WithAMessage() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        for args in [["lyrics", "parse", lyric], ["lyrics", "convert", lyric, "--to", "lrc"]] {
            let p = Process()
            p.executableURL = KTVBinary.url
            p.arguments = args
            p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            let err = Pipe()
            p.standardError = err
            try p.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            #expect(p.terminationReason == .exit)
            #expect(p.terminationStatus == 74, "\(args): \(text)")
            #expect(text.hasSuffix("ktv: <stdout>: cannot write: no space left on the device (check that the folder exists and is writable)\n"), "\(text)")
        }
    }

    @Test func aClosedPipeEndsQuietlyWithSIGPIPEIgnored() throws {
        let s = try Scratch()
        // About 1 MB of output: far more than a pipe buffers, so ktv is still writing when head leaves.
        var text = "[ti:Long]\n"
        for i in 0..<20000 { text += "[\(i * 1000),900]<0,450,0>word<450,450,0>word\n" }
        let lyric = try s.write("long.krc", text)
        let status = s.path("status")
        let script = "trap '' PIPE; ( '\(KTVBinary.url.path)' lyrics parse '\(lyric)' 2> '\(s.path("err"))'; echo $? > '\(status)' ) | head -c 100 > /dev/null"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        try p.run()
        p.waitUntilExit()
        let code = try String(contentsOfFile: status, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code == "0")
        #expect(try String(contentsOfFile: s.path("err"), encoding: .utf8) == "")
    }
}

// MARK: - 3. sample rates the analysis cannot use

@Suite struct SampleRateTests {
    @Test(arguments: [1, 100, 199, 4000])
    func lowRatesAreExit65NamingTheRateAndTheMinimum(rate: Int) throws {
        let s = try Scratch()
        let stereo = try s.write("low.wav", wavBytes(rate: UInt32(rate), channels: 2, frames: 4000) { f, c in Int16((f * 37 + c * 11) % 2000) })
        let mono = try s.write("low-mono.wav", wavBytes(rate: UInt32(rate), channels: 1, frames: 4000) { f, _ in Int16((f * 37) % 2000) })
        let lyric = try s.write("song.krc", goodKRC)
        for args in [["split", stereo, "--out-dir", s.path("o")], ["lyrics", "validate", lyric, "--audio", stereo], ["pitch", mono]] {
            let r = try ktv(args)
            #expect(r.status == 65, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("the sample rate is \(rate) Hz, which ktv cannot analyse: it needs at least 8000 Hz"), "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.path("o")))
    }

    /// 352 KB at 1 Hz claims a day of audio: refused at once, in a few MB, under a 1 GB address-space cap.
    @Test func aDayAtOneHertzIsRefusedInBoundedMemory() throws {
        let s = try Scratch()
        let day = try s.write("day.wav", wavBytes(rate: 1, channels: 2, frames: 86400 + 1600) { f, _ in Int16(f % 3000) })
        let r = try ktvLimited(["pitch", day], addressSpaceMB: 1024)
        print("peak RSS, ktv pitch on a 1 Hz WAV claiming a day (\(86400 + 1600) frames): \(r.peakRSSBytes / 1024) KB")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("the sample rate is 1 Hz"))
        #expect(r.peakRSSBytes < 100 << 20)
    }
}

// MARK: - 5. outputs that are special files

@Suite struct SpecialOutputTests {
    @Test func aDeviceIsWrittenIntoNotReplaced() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        // A private twin of /dev/null (same major/minor), so the test never risks the real one.
        let null = s.path("null")
        guard mknod(null, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0 else {
            print("skipped: mknod needs root (\(String(cString: strerror(errno))))")
            return
        }
        let r = try ktv(["lyrics", "parse", lyric, "-o", null])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(fileType(null) == S_IFCHR)
        let dir = try FileManager.default.contentsOfDirectory(atPath: s.dir.path)
        #expect(dir.sorted() == ["null", "song.krc"])
    }

    /// Not for older binaries (KTV_BIN): one that renames over /dev/stdout would break the machine.
    @Test func devStdoutIsStandardOutput() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        for path in ["/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"] {
            let dev = try ktv(["lyrics", "convert", lyric, "--to", "lrc", "-o", path])
            #expect(dev.status == 0, "\(dev.stderr)")
            #expect(dev.out.contains("Twin"))
            #expect(fileType("/dev/stdout") == S_IFLNK)
        }
    }

    @Test func aFIFOIsWrittenIntoNotReplaced() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        let fifo = s.path("pipe")
        #expect(mkfifo(fifo, 0o644) == 0)
        // Open the reading end first (non-blocking), so the writer's open does not wait.
        let fd = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(fd >= 0)
        defer { close(fd) }
        let r = try ktv(["lyrics", "convert", lyric, "--to", "lrc", "-o", fifo])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(fileType(fifo) == S_IFIFO)
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &buf, buf.count)
        #expect(n > 0)
        #expect(String(decoding: buf[0..<max(0, n)], as: UTF8.self).contains("Twin"))
    }

    @Test func aSymlinkKeepsPointingAtItsReplacedTarget() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        let real = try s.write("real.lrc", "old")
        chmod(real, 0o600)
        let link = s.path("link.lrc")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real.lrc")
        let r = try ktv(["lyrics", "convert", lyric, "--to", "lrc", "-o", link])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(fileType(link) == S_IFLNK)
        #expect(try String(contentsOfFile: real, encoding: .utf8).contains("Twin"))
        var st = stat()
        stat(real, &st)
        #expect(st.st_mode & 0o777 == 0o600)
        // Replay's --svg and --csv go the same way.
        let log = KTVBinary.packageRoot.appendingPathComponent("fixtures/replay/demo.jsonl").path
        let svgReal = try s.write("drift.svg", "old")
        try FileManager.default.createSymbolicLink(atPath: s.path("drift-link.svg"), withDestinationPath: svgReal)
        let rr = try ktv(["replay", log, "--svg", s.path("drift-link.svg"), "--csv", s.path("drift.csv")])
        #expect(rr.status == 1 || rr.status == 0, "\(rr.stderr)")
        #expect(fileType(s.path("drift-link.svg")) == S_IFLNK)
        #expect(try String(contentsOfFile: svgReal, encoding: .utf8).hasPrefix("<svg"))
    }

    @Test func dashIsStandardOutputAndAFolderIsRefused() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        let r = try ktv(["lyrics", "convert", lyric, "--to", "lrc", "-o", "-"])
        #expect(r.status == 0)
        #expect(r.out.contains("Twin"))
        let d = try ktv(["lyrics", "convert", lyric, "--to", "lrc", "-o", s.dir.path])
        #expect(d.status == 74)
        #expect(d.stderr.contains("is a folder, not a file"))
    }
}

// MARK: - 6. validate on a file it may not read

@Suite struct ValidateUnreadableTests {
    /// A UNIX socket is a path nobody can open for reading, even root (who can read any mode).
    @Test func anUnreadableFileIsExit74() throws {
        let s = try Scratch()
        let sock = s.path("song.lrc")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { p in
            for (i, b) in sock.utf8.prefix(p.count - 1).enumerated() { p[i] = b }
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let r = try ktv(["lyrics", "validate", sock])
        #expect(r.status == 74, "\(r.out) \(r.stderr)")
        #expect(r.out.contains("\(sock): cannot read"))
    }
}

// MARK: - 7. split writes all of its outputs or none

@Suite struct SplitAllOrNothingTests {
    @Test func aFailingOutputLeavesNoneOfTheOthers() throws {
        let s = try Scratch()
        let input = try dualMonoTrack(s, "song.wav", seconds: 3)
        let out = s.path("out")
        // accompaniment.wav cannot be written: a folder stands there.
        try FileManager.default.createDirectory(atPath: out + "/accompaniment.wav", withIntermediateDirectories: true)
        let r = try ktv(["split", input, "--out-dir", out, "--vocals"])
        #expect(r.status == 74, "\(r.stderr)")
        #expect(r.stderr.contains("accompaniment.wav"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["accompaniment.wav"])
    }

    @Test func theFolderIsNotCreatedWhenTheInputCannotBeRead() throws {
        let s = try Scratch()
        let bad = try s.write("bad.wav", "not audio at all, just text\n")
        for input in [s.path("missing.wav"), bad] {
            let r = try ktv(["split", input, "--out-dir", s.path("new/deeper")])
            #expect(r.status == 74 || r.status == 65)
            #expect(!FileManager.default.fileExists(atPath: s.path("new")))
        }
    }
}

// MARK: - 8. smaller findings

@Suite struct SmallerFindingsTests {
    @Test func pitchEvalCapsAQuotedBadToken() throws {
        let s = try Scratch()
        let token = String(repeating: "9x", count: 500_000)
        let ref = try s.write("ref.csv", "0.00,220\n0.01,\(token)\n")
        let est = try s.write("est.csv", "0.00,220\n0.01,220\n")
        let r = try ktv(["pitch", "eval", ref, est])
        #expect(r.status == 65)
        #expect(r.stderr.count < 400, "\(r.stderr.count) characters")
        #expect(r.stderr.contains("ref.csv:2: f0 `9x9x"))
        #expect(r.stderr.contains("9x9x…`"))
    }

    @Test func subnormalPitchIsUnvoicedNotNaN() throws {
        let s = try Scratch()
        let ref = try s.write("ref.csv", "0.00,220\n0.01,4.9e-324\n0.02,220\n0.03,2.2e-310\n")
        let est = try s.write("est.csv", "0.00,220\n0.01,1e-320\n0.02,221\n0.03,220\n")
        let r = try ktv(["pitch", "eval", ref, est, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.out.lowercased().contains("nan"))
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout)) as? [String: Any])
        #expect(obj["voiced_reference_frames"] as? Int == 2)
        #expect(obj["raw_pitch_accuracy"] as? Double == 1)
        #expect(abs((obj["median_abs_cents"] as? Double ?? -1) - 3.92) < 0.01)
    }

    /// FLAC's STREAMINFO may give 0 total samples ("unknown"): split and pitch read it anyway.
    @Test func flacWithUnknownLengthIsRead() throws {
        let s = try Scratch()
        let path = try dualMonoTrack(s, "song.flac", seconds: 4, format: .flac16)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // fLaC, block header (4), then STREAMINFO: total samples are the low 4 bits of byte 21 and bytes 22-25.
        #expect(Array(bytes[0..<4]) == Array("fLaC".utf8))
        bytes[21] &= 0xF0
        for i in 22...25 { bytes[i] = 0 }
        let unknown = try s.write("unknown.flac", bytes)
        let r = try ktv(["split", unknown, "--out-dir", s.path("o"), "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let (orig, _) = try AudioBuffer.read(path: s.path("o/original.wav"))
        #expect(orig.frames == 4 * 44100)
        let p = try ktv(["pitch", unknown])
        #expect(p.status == 0, "\(p.stderr)")
        #expect(p.stderr.isEmpty)
    }

    /// One policy for truncated audio: decode what can be decoded, warn with the time where it ends.
    @Test func truncatedFlacIsDecodedAsFarAsItGoesWithAWarning() throws {
        let s = try Scratch()
        let path = try dualMonoTrack(s, "song.flac", seconds: 6, format: .flac16)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let cut = try s.write("cut.flac", Array(bytes[0..<(bytes.count / 2)]))
        let split = try ktv(["split", cut, "--out-dir", s.path("o"), "--format", "json"])
        #expect(split.status == 0, "\(split.stderr)")
        #expect(split.stderr.contains("ktv: warning: \(cut): the audio ends at "))
        #expect(split.stderr.contains("of the 6.000 s its header claims"))
        let obj = try #require(try JSONSerialization.jsonObject(with: Data(split.stdout)) as? [String: Any])
        let at = try #require(obj["truncated_at_s"] as? Double)
        #expect(at > 2 && at < 4)
        let pitch = try ktv(["pitch", cut])
        #expect(pitch.status == 0, "\(pitch.stderr)")
        #expect(pitch.stderr.contains("ktv: warning: \(cut): the audio ends at "))
        let lastTime = pitch.out.split(separator: "\n").last.flatMap { Double($0.split(separator: ",")[0]) } ?? 0
        #expect(abs(lastTime - at) < 0.05)
    }
}

// MARK: - 4. lyric inputs that would eat the machine

@Suite struct HostileLyricsTests {
    /// A 6 MB `krc1` file that inflates to about 6 GB: zlib's full-flush points make one compressed
    /// megabyte of zeros repeatable, so it is built in an instant (by Python's zlib, independently).
    func bomb(_ s: Scratch) throws -> String {
        let path = s.path("bomb.krc")
        let script = """
        import zlib, sys
        key = bytes([0x40,0x47,0x61,0x77,0x5E,0x32,0x74,0x47,0x51,0x36,0x31,0x2D,0xCE,0xD2,0x6E,0x69])
        c = zlib.compressobj(9); z = b'\\0' * (1 << 20)
        first = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
        again = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
        body = first + again * 6000 + c.flush()
        out = bytes(b ^ key[i & 15] for i, b in enumerate(body))
        open(sys.argv[1], 'wb').write(b'krc1' + out)
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, path]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0, "python3 could not build the bomb")
        return path
    }

    @Test func aDecompressionBombIsRefusedInBoundedMemory() throws {
        let s = try Scratch()
        let path = try bomb(s)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        for args in [["lyrics", "validate", path], ["lyrics", "parse", path], ["lyrics", "decrypt", path]] {
            let r = try ktvLimited(args, addressSpaceMB: 2048, cpuSeconds: 60)
            print("peak RSS, ktv \(args[0...1].joined(separator: " ")) on a \(size / 1024) KB KRC bomb (~6 GB inflated): \(r.peakRSSBytes >> 20) MB, exit \(r.status.map(String.init) ?? "signal \(r.signal ?? 0)")")
            #expect(r.signal == nil, "\(args) was killed: \(r.stderr)")
            #expect(r.status == 65, "\(args): \(r.stderr)")
            #expect(r.peakRSSBytes < 400 << 20)
        }
    }

    /// A million lines of word-timed KRC (about 60 MB of text): parsed and validated in memory near
    /// the size of the text, under an address-space cap.
    @Test func aMillionLineLyricFitsInBoundedMemory() throws {
        let s = try Scratch()
        var text = "[ti:Long]\n[ar:Nobody]\n"
        text.reserveCapacity(64 << 20)
        for i in 0..<1_000_000 {
            text += "[\(i * 1000),900]<0,300,0>one <300,300,0>two <600,300,0>three\n"
        }
        let path = try s.write("million.krc", text)
        let size = text.utf8.count
        for args in [["lyrics", "validate", path], ["lyrics", "convert", path, "--to", "lrc"]] {
            let r = try ktvLimited(args, addressSpaceMB: 3072, cpuSeconds: 120)
            print("peak RSS, ktv \(args[0...1].joined(separator: " ")) on a 1,000,000-line KRC (\(size >> 20) MB): \(r.peakRSSBytes >> 20) MB, exit \(r.status.map(String.init) ?? "signal \(r.signal ?? 0)")")
            #expect(r.signal == nil, "\(args) was killed: \(r.stderr)")
            #expect(r.status == 0, "\(args): \(r.stderr.prefix(300))")
            #expect(r.peakRSSBytes < 4 * size)
        }
    }
}

// MARK: - 5. results files and manifests a probe writes (issue 31)

@Suite struct BatchReportRobustnessTests {
    /// `score_100` of 1e308, -1e308 or 99999999999999999999999 crashed the dashboard (exit 132 in
    /// `BatchResults.histogram`): the take is counted in the nearest bin and a warning names the line.
    @Test func outOfRangeScoresDoNotCrashTheDashboard() throws {
        let s = try Scratch()
        for value in ["1e308", "-1e308", "99999999999999999999999"] {
            let results = try s.write("r.jsonl", "{\"id\":\"a\",\"status\":\"ok\",\"result\":{\"rules\":\"ktv\",\"score\":50,\"score_100\":\(value)}}\n")
            let r = try ktv(["batch", "report", results, "--html", s.path("d.html"), "--csv", s.path("t.csv")])
            #expect(r.status == 0, "\(value): \(r.stderr)")
            #expect(r.stderr.contains("r.jsonl: line 1: score_100") && r.stderr.contains("outside 0…100"), "\(value): \(r.stderr)")
            #expect(FileManager.default.fileExists(atPath: s.path("d.html")))
        }
    }

    /// A results line's `page` of `../../../etc/passwd` became a dashboard link there: only a take's
    /// own page in the pages folder is linked, and the rest are named in warnings.
    @Test func aTamperedPageIsNotLinked() throws {
        let s = try Scratch()
        let line = { (id: String, page: String) in "{\"id\":\"\(id)\",\"status\":\"ok\",\"result\":{\"rules\":\"ktv\",\"score\":1,\"score_100\":50,\"page\":\"\(page)\"}}\n" }
        let results = try s.write("r.jsonl", line("t0", s.path("pages/t0.html")) + line("evil", "../../../etc/passwd") + line("t1", s.path("pages/t1.html")))
        let r = try ktv(["batch", "report", results, "--html", s.path("dash.html")])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("ktv: warning: \(results): take `evil`: its page `../../../etc/passwd` is not the page ktv batch writes for it"), "\(r.stderr)")
        let html = try String(contentsOfFile: s.path("dash.html"), encoding: .utf8)
        #expect(!html.contains("etc/passwd\"") && html.contains("\"pages/t0.html\"") && html.contains("\"pages/t1.html\""))
    }

    /// `ktv batch report /dev/zero` read one endless line (rescanning it on every block) and never
    /// ended; `ktv batch /dev/zero` buffered 1 GB and then said I/O error (74). Both stop at a bound
    /// with exit 65 naming the file.
    @Test func endlessInputsStopAtABoundWithExit65() throws {
        let report = try #require(try ktvWithin(60, ["batch", "report", "/dev/zero"]), "ktv batch report /dev/zero did not end")
        #expect(report.status == 65, "\(report.stderr)")
        #expect(report.stderr.contains("ktv: /dev/zero: line 1 runs past 64 MB without an end"), "\(report.stderr)")
        let run = try #require(try ktvWithin(60, ["batch", "/dev/zero", "--progress", "never"]), "ktv batch /dev/zero did not end")
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("ktv: /dev/zero: more than 64 MB read from a stream"), "\(run.stderr)")
    }
}

// MARK: - 6. audio and takes through a FIFO (issue 31)

@Suite struct AudioFIFORobustnessTests {
    /// ktv opened an audio or take path up to three times (two sniffs, then the decoder): through a
    /// FIFO the later opens waited forever for a writer. A FIFO is refused by name before it is
    /// opened, promptly, with exit 74 and how to get past it.
    @Test func aFIFOAsAudioOrTakeIsRefusedPromptly() throws {
        let s = try Scratch()
        let audio = s.path("take.m4a"), track = s.path("take.csv")
        #expect(mkfifo(audio, 0o644) == 0)
        #expect(mkfifo(track, 0o644) == 0)
        let reference = try s.write("ref.json", "[{\"start_ms\": 100, \"duration_ms\": 300, \"midi\": 60}]")
        let real = try s.write("real.wav", wavBytes(rate: 16000, channels: 1, frames: 16000))
        let runs: [(args: [String], path: String)] = [
            (["score", audio, "--reference", reference], audio),
            (["score", track, "--reference", reference], track),
            (["pitch", audio], audio),
            (["pitch", real, "--accompaniment", audio], audio),
            (["split", audio, "--out-dir", s.path("o")], audio),
            (["score", real, "--reference-audio", audio], audio),
        ]
        for (args, path) in runs {
            let r = try #require(try ktvWithin(20, args), "\(args) hung on a FIFO with no writer")
            #expect(r.status == 74, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("ktv: \(path): cannot read") && r.stderr.contains("is a FIFO (named pipe), not a regular file; save it to a file first"),
                    "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.path("o")))
    }
}

// MARK: - 7. outputs written onto an input (issue 31)

@Suite struct OutputOverInputRobustnessTests {
    /// Every output was written (atomically) over an input named the same, or linked to it, with exit
    /// 0; only `ktv batch -o` onto its manifest was refused. Each is exit 64 naming both, the input
    /// left as it was.
    @Test func anOutputOntoAnInputIsAUsageErrorAndTheInputSurvives() throws {
        let s = try Scratch()
        let take = try s.write("take.wav", wavBytes(rate: 16000, channels: 1, frames: 8000))
        let track = try s.write("take.csv", "time_s,f0_hz\n0.1,261.63\n")
        let reference = try s.write("ref.json", "[{\"start_ms\": 100, \"duration_ms\": 300, \"midi\": 60}]")
        let results = try s.write("res.jsonl", "{\"id\":\"a\",\"status\":\"ok\",\"result\":{\"rules\":\"ktv\",\"score\":1,\"score_100\":50}}\n")
        let manifest = try s.write("m.csv", "id,take,reference\nt0,take.csv,ref.json\n")
        let original = try s.write("d/original.wav", wavBytes(rate: 16000, channels: 2, frames: 8000))
        let lyric = try s.write("song.krc", goodKRC)
        let symlink = s.path("link.wav"), hardlink = s.path("hard.wav")
        try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: take)
        #expect(link(take, hardlink) == 0)
        let inputs = [take, track, reference, results, manifest, original, lyric]
        let before = try inputs.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let runs: [(args: [String], output: String, input: String)] = [
            (["pitch", take, "-o", take], take, take),
            (["pitch", take, "-o", symlink], symlink, take),
            (["pitch", take, "-o", hardlink], hardlink, take),
            (["score", take, "--reference", reference, "--html", take], take, take),
            (["score", track, "--reference", reference, "--svg", reference], reference, reference),
            (["batch", "report", results, "--html", results], results, results),
            (["batch", "report", results, "--csv", results], results, results),
            (["batch", manifest, "-o", s.path("r.jsonl"), "--summary", manifest, "--progress", "never"], manifest, manifest),
            (["split", original, "--out-dir", s.path("d")], original, original),
            (["lyrics", "convert", lyric, "--to", "krc", "-o", lyric], lyric, lyric),
        ]
        for (args, output, input) in runs {
            let r = try ktv(args)
            #expect(r.status == 64, "\(args): \(r.stderr)")
            #expect(r.stderr.contains(output) && r.stderr.contains(input) && r.stderr.contains("writing it would destroy the input"), "\(args): \(r.stderr)")
        }
        // A summary onto a file a manifest row names (its take) is refused before the results are opened.
        let r = try ktv(["batch", manifest, "-o", s.path("r.jsonl"), "--summary", track, "--progress", "never"])
        #expect(r.status == 64 && r.stderr.contains("\(track) is \(track) (\(manifest) line 2, take)"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.path("r.jsonl")))
        let after = try inputs.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        #expect(before == after)
        #expect(fileType(symlink) == S_IFLNK)
    }
}

// MARK: - 8. inputs over their size limit (issue 31)

@Suite struct OverLimitRobustnessTests {
    /// A file of `bytes` that takes no disk: its size is all the limit checks look at first.
    func sparse(_ s: Scratch, _ name: String, bytes: Int) throws -> String {
        let path = try s.write(name, "")
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(bytes))
        try handle.close()
        return path
    }

    /// A reference or a manifest over its size limit was exit 74 (an I/O error): the input is the
    /// problem, so 65, with the file named.
    @Test func aReferenceOrManifestOverItsLimitIsBadData() throws {
        let s = try Scratch()
        let take = try s.write("take.csv", "time_s,f0_hz\n0.1,261.63\n")
        let reference = try sparse(s, "big.xml", bytes: (64 << 20) + 1)
        var r = try ktv(["score", take, "--reference", reference])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("ktv: \(reference): larger than the 64 MB limit"), "\(r.stderr)")
        let manifest = try sparse(s, "big.csv", bytes: (1 << 30) + 1)
        r = try ktv(["batch", manifest, "--progress", "never"])
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("ktv: \(manifest): larger than the 1024 MB limit on manifests"), "\(r.stderr)")
    }

    /// `ktv lyrics parse /dev/zero` said "the input is 0 bytes, over the 64 MB limit": a device's
    /// `st_size` is no length.
    @Test func aStreamOverTheLyricLimitIsNotCalledZeroBytes() throws {
        for args in [["lyrics", "parse", "/dev/zero"], ["lyrics", "validate", "/dev/zero"]] {
            let r = try ktv(args)
            #expect(r.status == 65, "\(args): \(r.stderr)")
            let text = r.out + r.stderr
            #expect(!text.contains("is 0 bytes") && text.contains("/dev/zero: ") && text.contains("the input is more than 67108864 bytes, over the 64 MB limit"), "\(args): \(text)")
        }
    }
}

// MARK: - 9. small edges (issue 31)

@Suite struct SmallEdgesRobustnessTests {
    @Test func webvttIsAcceptedAndAnUnknownFormatSuggestsTheNearest() throws {
        let s = try Scratch()
        let lyric = try s.write("song.krc", goodKRC)
        var r = try ktv(["lyrics", "convert", lyric, "--to", "webvtt"])
        #expect(r.status == 0 && r.out.hasPrefix("WEBVTT"), "\(r.stderr)")
        for (typo, nearest) in [("webvt", "webvtt"), ("kcr", "krc"), ("ttm", "ttml")] {
            r = try ktv(["lyrics", "convert", lyric, "--to", typo])
            #expect(r.status == 64 && r.stderr.contains("did you mean `\(nearest)`?"), "\(typo): \(r.stderr)")
        }
        r = try ktv(["lyrics", "parse", lyric, "--from", "krcc"])
        #expect(r.status == 64 && r.stderr.contains("did you mean `krc`?"), "\(r.stderr)")
    }

    /// An M4A whose header is whole and whose data is random decoded to nothing, and the commands
    /// said "the input has no samples" without the file (`lyrics validate --audio`: exit 1, "Error:").
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "needs the ffmpeg tool to make the M4A"))
    func anM4AWhoseDataIsRandomIsNamed() throws {
        let s = try Scratch()
        let good = s.path("good.m4a")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a", "aac", "-movflags", "+faststart", good]
        try p.run()
        p.waitUntilExit()
        try #require(p.terminationStatus == 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let mdat = try #require(bytes.indices.dropLast(4).first { bytes[$0..<$0 + 4].elementsEqual("mdat".utf8) })
        var generator = SystemRandomNumberGenerator()
        for i in (mdat + 4)..<bytes.count { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        let bad = try s.write("bad.m4a", bytes)
        let reference = try s.write("ref.json", "[{\"start_ms\": 100, \"duration_ms\": 300, \"midi\": 60}]")
        let lyric = try s.write("song.krc", goodKRC)
        for args in [["pitch", bad], ["score", bad, "--reference", reference], ["lyrics", "validate", lyric, "--audio", bad]] {
            let r = try ktv(args)
            #expect(r.status == 65, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("ktv: \(bad): reading audio failed: not one frame of the 2."), "\(args): \(r.stderr)")
            #expect(!r.stderr.contains("Error:"), "\(args): \(r.stderr)")
        }
    }
}
