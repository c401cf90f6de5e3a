// ktv-bench: the performance checks behind `make bench`. Each bench generates its own inputs from a
// fixed seed, runs the real `ktv` binary as a whole process (what users run), and prints the figures.
import Foundation
import KTVCore
import KTVLyrics
import KTVAudio
import KTVSynth

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ktv-bench: \(message)\n".utf8))
    exit(2)
}

func option(_ name: String, in args: [String]) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

/// A bench's scratch folder for its generated inputs: `ktv-bench-NAME-PID` under the temporary
/// directory, made empty. `remove()` deletes it, unless KTV_BENCH_KEEP=1 keeps it (and prints where)
/// to profile a case by hand.
struct BenchDirectory {
    let path: String

    init(_ name: String) {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("ktv-bench-\(name)-\(getpid())").path
        try? FileManager.default.removeItem(atPath: path)
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch { fail("\(path): \(error)") }
    }

    func remove() {
        if ProcessInfo.processInfo.environment["KTV_BENCH_KEEP"] == "1" {
            print("inputs kept in \(path)")
        } else {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A plausible song: tags, a translation layer on some songs, 30-50 lines of 4-9 words.
func generateSong(_ rng: inout SeededGenerator, index: Int) -> Lyrics {
    let syllables = ["la", "na", "ri", "mo", "ka", "su", "yo", "te", "星", "光", "夜", "风", "你", "我", "梦", "海"]
    var lyrics = Lyrics(format: .krc, tags: [
        LyricTag(key: "id", value: "$\(String(index, radix: 16))"),
        LyricTag(key: "ar", value: "Bench Artist \(index % 97)"),
        LyricTag(key: "ti", value: "Bench Song \(index)"),
        LyricTag(key: "by", value: ""),
        LyricTag(key: "total", value: "0"),
    ])
    var t = Int.random(in: 500...3000, using: &rng)
    let lineCount = Int.random(in: 30...50, using: &rng)
    let translated = index % 3 == 0
    for _ in 0..<lineCount {
        var words: [LyricWord] = []
        var wt = t
        for _ in 0..<Int.random(in: 4...9, using: &rng) {
            let d = Int.random(in: 120...700, using: &rng)
            let text = syllables[Int.random(in: 0..<syllables.count, using: &rng)] + (Bool.random(using: &rng) ? " " : "")
            words.append(LyricWord(startMs: wt, durationMs: d, text: text))
            wt += d + Int.random(in: 0...40, using: &rng)
        }
        let end = wt + Int.random(in: 0...200, using: &rng)
        var line = LyricLine(startMs: t, durationMs: end - t, text: words.map(\.text).joined(), words: words)
        if translated { line.translation = "translation of line at \(t)" }
        lyrics.lines.append(line)
        t = end + Int.random(in: 0...2500, using: &rng)
    }
    lyrics.tags[4].value = String(t + 5000)
    return lyrics
}

/// `count` generated songs as encrypted KRC files (`songNNNNN.krc`), the bench's original lyric
/// set; their total bytes.
@discardableResult
func writeKRCSet(dir: String, count: Int) -> Int {
    var rng = SeededGenerator(seed: 20261123)
    var bytes = 0
    for i in 0..<count {
        let song = generateSong(&rng, index: i)
        do {
            let file = try LyricsWriter.write(song, as: .krc).bytes
            bytes += file.count
            try FileIO.writeAtomically(file, to: dir + String(format: "/song%05d.krc", i))
        } catch { fail("\(error)") }
    }
    return bytes
}

/// The files of a mixed lyric set, in turn: every format ktv reads, each with the ending a folder
/// walk picks up. Agora's pitch files are written here (ktv converts to them only from JSON).
let mixedLyricFormats: [(name: String, ext: String, output: LyricsOutputFormat?)] = [
    ("KRC", "krc", .krc), ("KRC text", "txt", .krcText), ("LRC", "lrc", .lrc), ("enhanced LRC", "lrc", .elrc),
    ("YRC", "yrc", .yrc), ("QRC", "qrc", .qrc), ("QRC XML", "xml", .qrcXML), ("Migu XML", "xml", .xml),
    ("ktv JSON", "json", .json), ("ASS", "ass", .ass), ("WebVTT", "vtt", .vtt), ("TTML", "ttml", .ttml),
    ("Lyricify Syllable", "lys", .lys), ("Agora pitch JSON", "pitch", nil), ("Agora binary pitch", "pitch", nil),
]

/// `count` generated songs, each in the next of `mixedLyricFormats` (`songNNNNN.EXT`); their total bytes.
@discardableResult
func writeMixedLyricSet(dir: String, count: Int) -> Int {
    var rng = SeededGenerator(seed: 20261126)
    var bytes = 0
    for i in 0..<count {
        let song = generateSong(&rng, index: i)
        let format = mixedLyricFormats[i % mixedLyricFormats.count]
        do {
            let file: [UInt8]
            if let output = format.output {
                file = try LyricsWriter.write(song, as: output).bytes
            } else {
                // Agora's pitch: one value per word, as JSON `pitchDatas` or as version-1 binary frames of 40 ms.
                let words = song.lines.flatMap(\.words)
                if format.name.hasSuffix("JSON") {
                    file = Array(("{\"pitchDatas\":[" + words.enumerated().map { k, w in
                        "{\"pitch\":\(150 + k % 200),\"startTime\":\(w.startMs),\"duration\":\(w.durationMs)}"
                    }.joined(separator: ",") + "]}").utf8)
                } else {
                    var b: [UInt8] = []
                    for v: UInt32 in [1, 40, 0] { b += withUnsafeBytes(of: v.littleEndian, Array.init) }
                    let frames = (words.last?.endMs ?? 0) / 40
                    for f in 0..<frames { b += withUnsafeBytes(of: Double(f % 7 == 0 ? 0 : 150 + f % 200).bitPattern.littleEndian, Array.init) }
                    file = b
                }
            }
            bytes += file.count
            try FileIO.writeAtomically(file, to: dir + String(format: "/song%05d.", i) + format.ext)
        } catch { fail("\(error)") }
    }
    return bytes
}

/// `ktv lyrics validate` of a folder, whole process, best of 3: the mixed set (every format ktv reads,
/// in turn), the encrypted-KRC set it replaced as the bench's figure, and the real files of
/// ../shared/lyrics repeated to the same count when ../shared is there. Target: 20,000 files/s.
/// The lyric files of `shared`/lyrics (not its notes), copied in turn until there are `count`:
/// the files written and how many distinct ones there are; (0, 0) without ../shared.
func copySharedLyricSet(shared: String, to dir: String, count: Int) -> (files: Int, distinct: Int) {
    let fm = FileManager.default
    let real = ((try? fm.subpathsOfDirectory(atPath: shared + "/lyrics")) ?? []).filter { rel in
        var isDir: ObjCBool = false
        return !rel.hasSuffix(".md") && fm.fileExists(atPath: shared + "/lyrics/" + rel, isDirectory: &isDir) && !isDir.boolValue
    }.sorted()
    guard !real.isEmpty else { return (0, 0) }
    for k in 0..<count {
        let rel = real[k % real.count]
        try? fm.copyItem(atPath: shared + "/lyrics/" + rel, toPath: dir + String(format: "/f%05d.", k) + (rel as NSString).pathExtension)
    }
    return (count, real.count)
}

func benchLyricsValidate(_ args: [String]) {
    let count = Int(option("--files", in: args) ?? "10000") ?? 10000
    let ktv = option("--ktv", in: args) ?? ".build/release/ktv"
    let shared = option("--shared", in: args) ?? "../shared"
    guard FileManager.default.isExecutableFile(atPath: ktv) else { fail("no ktv binary at \(ktv); run `swift build -c release` first") }
    let scratch = BenchDirectory("lyrics")
    defer { scratch.remove() }
    var sets: [(name: String, dir: String, accepted: Set<Int32>)] = []
    let genStart = now()
    func folder(_ name: String) -> String {
        let path = scratch.path + "/" + name
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch { fail("\(path): \(error)") }
        return path
    }
    let mixed = folder("mixed"), krc = folder("krc")
    let mixedBytes = writeMixedLyricSet(dir: mixed, count: count)
    sets.append(("generated, every format ktv reads in turn (\(mixedLyricFormats.count) formats)", mixed, [0]))
    let krcBytes = writeKRCSet(dir: krc, count: count)
    sets.append(("generated, encrypted KRC only", krc, [0]))
    // The real files hold broken ones on purpose: findings (1) and unreadable files (65) are the work done.
    let sharedDir = folder("shared")
    let (realFiles, distinct) = copySharedLyricSet(shared: shared, to: sharedDir, count: count)
    if realFiles > 0 { sets.append(("../shared/lyrics repeated (\(distinct) real files)", sharedDir, [0, 1, 65])) }
    print(String(format: "generated %d files of every format (%d KiB) and %d encrypted KRC (%d KiB)%@ in %.1f s", count, mixedBytes / 1024, count, krcBytes / 1024,
                 realFiles > 0 ? ", copied \(realFiles) real files" : "", now() - genStart))
    print("| set (\(count) files, --format json, whole process, best of 3) | wall s | files/s | CPU s | peak MB | target ≥ 20,000 files/s |")
    print("|---|---|---|---|---|---|")
    for set in sets {
        var best: ProcessRun?
        for _ in 0..<3 {
            let run = runProcess(ktv, ["lyrics", "validate", set.dir, "--format", "json"])
            if !set.accepted.contains(run.status) { fail("validating \(set.name) exited \(run.status)") }
            if best.map({ run.wallS < $0.wallS }) ?? true { best = run }
        }
        guard let best else { continue }
        let rate = Double(count) / best.wallS
        print(String(format: "| %@ | %.2f | %.0f | %.2f | %.0f | %@ |", set.name, best.wallS, rate, best.cpuS, best.peakMB, rate >= 20_000 ? "PASS" : "FAIL"))
    }
}

/// Writes a generated dual-mono KTV track (and its true vocal) for experiments, fixtures and benchmarks.
func makeTrack(_ args: [String]) {
    let seconds = Double(option("--seconds", in: args) ?? "20") ?? 20
    let lag = Int(option("--lag", in: args) ?? "0") ?? 0
    let gain = Float(option("--gain", in: args) ?? "0.85") ?? 0.85
    let layout = option("--layout", in: args) ?? "left"
    let seed = UInt64(option("--seed", in: args) ?? "7") ?? 7
    let rate = Double(option("--rate", in: args) ?? "44100") ?? 44100
    guard let out = option("-o", in: args) else { fail("make-track needs -o PATH") }
    let format = AudioFileFormat(rawValue: option("--audio-format", in: args) ?? "wav16") ?? .wav16
    var vs = VoiceSynthesizer()
    vs.sampleRate = rate
    let melody = VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...72, seed: seed)
    let voice = vs.render(melody, seconds: seconds, seed: seed)
    var accSynth = AccompanimentSynthesizer()
    accSynth.sampleRate = rate
    let acc = accSynth.render(seconds: seconds, seed: seed &+ 1)
    let mix = DualMonoMixer.mix(voice: voice.samples, accompaniment: acc, lagSamples: lag, gain: gain)
    let chans = layout == "left" ? [mix.original, mix.accompaniment] : layout == "right" ? [mix.accompaniment, mix.original] : [mix.accompaniment, voice.samples]
    do {
        try AudioBuffer(sampleRate: rate, channels: chans).write(path: out, format: format)
        if let v = option("--vocal-out", in: args) {
            try AudioBuffer(sampleRate: rate, channels: [voice.samples]).write(path: v, format: .wavFloat)
        }
        if let f = option("--f0-out", in: args) {
            // The exact f0 every 10 ms (0 = unvoiced), the format of shared/scenes/*.f0.csv.
            let hop = Int(rate / 100)
            var csv = "time_s,f0_hz\n"
            for k in 0..<(voice.f0.count / hop) { csv += String(format: "%.2f,%.3f\n", Double(k) / 100, voice.f0[k * hop]) }
            try FileIO.writeAtomically(Array(csv.utf8), to: f)
        }
        if let l = option("--lyrics-out", in: args) {
            // A KRC whose words are the sung notes, one line per phrase (notes that follow each other).
            let syllables = ["la", "li", "lu", "na", "no", "ri", "ra", "do"]
            var lyrics = Lyrics(format: .krc, tags: [LyricTag(key: "ti", value: "Demo \(seed)"), LyricTag(key: "ar", value: "KTVSynth")])
            var words: [LyricWord] = []
            func flush() {
                guard let first = words.first, let last = words.last else { return }
                lyrics.lines.append(LyricLine(startMs: first.startMs, durationMs: last.endMs - first.startMs,
                                              text: words.map(\.text).joined(), words: words))
                words = []
            }
            for (i, note) in melody.enumerated() {
                let start = Int((note.start * 1000).rounded()), end = Int(((note.start + note.duration) * 1000).rounded())
                if let last = words.last, last.endMs != start { flush() }
                words.append(LyricWord(startMs: start, durationMs: end - start, text: syllables[i % syllables.count] + " "))
            }
            flush()
            try FileIO.writeAtomically(try LyricsWriter.write(lyrics, as: .krcText).bytes, to: l)
        }
    } catch { fail("\(error)") }
}

/// Runs a command, returns wall seconds, exit status and the peak RSS of the children so far (MB).
@discardableResult
func timed(_ executable: String, _ arguments: [String]) -> (seconds: Double, status: Int32) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    let start = now()
    do { try p.run() } catch { fail("cannot run \(executable): \(error)") }
    p.waitUntilExit()
    return (now() - start, p.terminationStatus)
}

func childPeakMB() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
    return Double(usage.ru_maxrss) / 1024
}

func writeBenchTrack(seconds: Double, to path: String) {
    let voice = VoiceSynthesizer().render(VoiceSynthesizer.melody(seconds: seconds, midiRange: 55...72, seed: 5), seconds: seconds, seed: 5)
    let acc = AccompanimentSynthesizer().render(seconds: seconds, seed: 6)
    let mix = DualMonoMixer.mix(voice: voice.samples, accompaniment: acc, lagSamples: 300, gain: 0.85)
    do { try AudioBuffer(sampleRate: 44100, channels: [mix.original, mix.accompaniment]).write(path: path, format: .wav16) } catch { fail("\(error)") }
}

/// `ktv split` against two `sox … remix` runs on a 10-minute stereo WAV; peak memory on a 60-minute file.
func benchSplit(_ args: [String]) {
    let ktv = option("--ktv", in: args) ?? ".build/release/ktv"
    let sox = option("--sox", in: args) ?? "/usr/bin/sox"
    let minutes = Double(option("--minutes", in: args) ?? "10") ?? 10
    let longMinutes = Int(option("--long-minutes", in: args) ?? "60") ?? 60
    guard FileManager.default.isExecutableFile(atPath: sox) else { fail("no sox at \(sox); `make setup` installs it") }
    let scratch = BenchDirectory("split")
    defer { scratch.remove() }
    let dir = scratch.path
    let input = dir + "/track.wav"
    let seconds = minutes * 60
    let genStart = now()
    // In a function of its own so the signals are freed before any child is measured: a forked
    // child's peak RSS counts the parent's pages until exec.
    writeBenchTrack(seconds: seconds, to: input)
    print(String(format: "generated a %.0f-minute 44.1 kHz 16-bit stereo WAV in %.1f s", minutes, now() - genStart))

    // Warm the page cache so neither side pays for the first read.
    timed(sox, [input, "-n", "stat"])
    var soxTimes: [Double] = [], ktvTimes: [Double] = [], ktvVocalTimes: [Double] = []
    for _ in 0..<3 {
        let l = timed(sox, [input, dir + "/L.wav", "remix", "1"]), r = timed(sox, [input, dir + "/R.wav", "remix", "2"])
        soxTimes.append(l.seconds + r.seconds)
        let k = timed(ktv, ["split", input, "--out-dir", dir + "/k"])
        if k.status != 0 { fail("ktv split exited \(k.status)") }
        ktvTimes.append(k.seconds)
        let v = timed(ktv, ["split", input, "--out-dir", dir + "/kv", "--vocals"])
        if v.status != 0 { fail("ktv split --vocals exited \(v.status)") }
        ktvVocalTimes.append(v.seconds)
    }
    let soxT = soxTimes.min()!, ktvT = ktvTimes.min()!, ktvV = ktvVocalTimes.min()!
    print("| tool (best of 3, \(Int(minutes)) min) | wall s | vs sox |")
    print("|---|---|---|")
    print(String(format: "| sox remix 1 + sox remix 2 (two files) | %.2f | 1.00× |", soxT))
    print(String(format: "| ktv split (analysis + two files + split.json) | %.2f | %.2f× |", ktvT, ktvT / soxT))
    print(String(format: "| ktv split --vocals (+ vocal estimate) | %.2f | %.2f× |", ktvV, ktvV / soxT))
    print(String(format: "target: ktv split within 1.5× of sox -> %@ (with --vocals: %@)", ktvT <= 1.5 * soxT ? "PASS" : "FAIL", ktvV <= 1.5 * soxT ? "PASS" : "FAIL"))

    // Peak memory: a long file made of copies of the track, measured on ktv's own process.
    let long = dir + "/long.wav"
    let copies = max(1, Int((Double(longMinutes) / minutes).rounded(.up)))
    timed(sox, Array(repeating: input, count: copies) + [long])
    try? FileManager.default.removeItem(atPath: dir + "/k")
    let run = spawnMeasured(ktv, ["split", long, "--out-dir", dir + "/long", "--vocals"])
    print(String(format: "ktv split --vocals on a %d-minute file: %.1f s, exit %d, peak RSS %.0f MB (target < 200 MB) -> %@",
                 copies * Int(minutes), run.seconds, run.status, run.peakMB, run.peakMB < 200 ? "PASS" : "FAIL"))
}

/// Runs a command and reports its peak resident memory: VmHWM from /proc/PID/status, sampled every
/// 10 ms, plus each child process's own peak (`ktv batch`'s workers), summed: an upper bound on the
/// whole tree's, since the peaks need not coincide. (wait4's ru_maxrss would also count the forked
/// parent's pages from before exec, and gives the largest child, not the sum.)
func spawnMeasured(_ executable: String, _ arguments: [String], quiet: Bool = false) -> (seconds: Double, status: Int32, peakMB: Double) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.standardOutput = FileHandle.nullDevice
    if quiet { p.standardError = FileHandle.nullDevice }
    let start = now()
    do { try p.run() } catch { fail("cannot run \(executable): \(error)") }
    var peakKB = 0.0
    var childPeakKB: [Int32: Double] = [:]
    while p.isRunning {
        let pid = p.processIdentifier
        if let bytes = ProcessMemory.peakResidentBytes(pid: pid) { peakKB = max(peakKB, Double(bytes) / 1024) }
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            let listed = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            for child in listed.split(separator: " ").compactMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                if let bytes = ProcessMemory.peakResidentBytes(pid: child) { childPeakKB[child] = max(childPeakKB[child] ?? 0, Double(bytes) / 1024) }
            }
        }
        usleep(10_000)
    }
    p.waitUntilExit()
    return (now() - start, p.terminationStatus, (peakKB + childPeakKB.values.reduce(0, +)) / 1024)
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first {
case "lyrics-validate": benchLyricsValidate(args)
case "make-track": makeTrack(args)
case "make-takes": makeTakes(args)
case "split": benchSplit(args)
case "replay": benchReplay(args)
case "pitch": benchPitch(args)
case "score": benchScore(args)
case "assess": benchAssess(args)
case "assess-experts": benchExpertAssess(args)
case "batch": benchBatch(args)
case "sync": benchSync(args)
case "compare": benchCompare(args)
case "compare-inputs":
    guard args.count > 1 else { fail("compare-inputs needs a folder") }
    CompareInputs.write(args[1], shared: option("--shared", in: args) ?? "../shared")
default:
    print("usage: ktv-bench lyrics-validate [--files N] [--ktv PATH]\n       ktv-bench make-takes DIR [--takes N] [--seconds S] [--songs N]\n       ktv-bench make-track -o PATH [--seconds S] [--lag N] [--gain G] [--layout left|right|unrelated] [--seed N] [--vocal-out PATH]\n       ktv-bench score [--takes N] [--audio-takes N] [--ktv PATH]\n       ktv-bench batch [--takes N] [--distinct N] [--ktv PATH]\n       ktv-bench sync [--minutes M] [--ktv PATH]\n       ktv-bench compare --base PATH [--ktv PATH] [--runs N] [--only TEXT]\n       ktv-bench assess [--shared DIR] [--sweep SETTING=V1,V2,...]\n       ktv-bench assess-experts [--pesnq DIR]")
    exit(args.isEmpty ? 0 : 64)
}
