import ArgumentParser
import Foundation
import KTVAudio
import KTVCore
import KTVPitch
import KTVScore
import KTVSync

extension ScoringRuleSet: ExpressibleByArgument {}

struct ScoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "score",
        abstract: "Score a take (audio or a pitch track) against a reference melody.",
        discussion: """
        The reference: Migu/Agora XML, ktv notes JSON, or a pitch file (Agora .pitch) with --lyrics.
        The take: audio (tracked; with --accompaniment its bleed is cancelled and the latency measured) or a
        pitch track (ktv pitch CSV/JSON, `time f0` text). Rules: ktv (0-100, explained note by note).
        """)

    @Argument(help: "The take: audio, or a pitch track.")
    var take: String

    @Option(help: "The reference melody: Migu/Agora XML, notes JSON, UltraStar, MIDI, or an Agora pitch file with --lyrics.")
    var reference: String?

    @Option(help: "Or a recording of the reference: a dual-mono KTV track is split and its vocal tracked and segmented into notes.")
    var referenceAudio: String?

    @Option(help: "Lyrics for the reference's words and lines (with a pitch file or notes without lines).")
    var lyrics: String?

    @Option(help: "Rule set: ktv (0-100, explained note by note) or agora (AgoraLyricsScore exactly: a sum of line scores).")
    var rules: ScoringRuleSet = .ktv

    @Option(help: ArgumentHelp("With --rules agora: " + AgoraRulesConfiguration.Spec.level.help))
    var level = AgoraRulesConfiguration.Spec.level.defaultValue

    @Option(help: ArgumentHelp("With --rules agora: " + AgoraRulesConfiguration.Spec.compensationOffset.help))
    var offset = AgoraRulesConfiguration.Spec.compensationOffset.defaultValue

    @Option(help: ArgumentHelp("With --rules agora: " + AgoraRulesConfiguration.Spec.progressIntervalMs.help))
    var progressIntervalMs = AgoraRulesConfiguration.Spec.progressIntervalMs.defaultValue

    @Option(help: "A take given as one Hz value per line: the interval between values, ms (value k is at (k+1)·interval).")
    var pitchIntervalMs: Int?

    @Option(help: "The accompaniment played during an audio take: its bleed is cancelled and the latency measured.")
    var accompaniment: String?

    @Option(help: "The take's delay against the song, ms (default: measured with --accompaniment, else 0).")
    var latencyMs: Double?

    @Option(help: "A progress log (JSON Lines, docs/progress-log.md): the take is placed on the song through --device's record and progress events.")
    var progressLog: String?

    @Option(help: "With --progress-log: the device that recorded the take.")
    var device: String?

    @Option(help: "auto (estimate; whole octaves forgiven, the rest judged on intervals at a cost), none, or a shift in cents.")
    var keyShift: String = "auto"

    @Flag(help: "Count lines outside the recording as 0 instead of leaving them out.")
    var wholeSong = false

    @Option(help: "Draw the notes, the sung pitch and each line's score (SVG) here, atomically.")
    var svg: String?

    @Option(help: "Report: text or json.")
    var format: ReportFormat = .text

    @Option(name: .shortAndLong, help: "Write the report to this file (atomically) instead of standard output.")
    var output: String?

    enum ReportFormat: String, ExpressibleByArgument, CaseIterable { case text, json }

    func validate() throws {
        _ = try configuration()
        if (progressLog == nil) != (device == nil) { throw ValidationError("--progress-log and --device go together") }
        if (reference == nil) == (referenceAudio == nil) { throw ValidationError("give one of --reference and --reference-audio") }
    }

    func configuration() throws -> ScoreConfiguration {
        var options = ScoringRuleSet.Options()
        do { options.keyShift = try KeyShift(parsing: keyShift) } catch { throw usageError(error) }
        options.wholeSong = wholeSong
        options.agora = AgoraRulesConfiguration(level: level, compensationOffset: offset, progressIntervalMs: progressIntervalMs)
        if let latencyMs, !(latencyMs.isFinite && abs(latencyMs) <= 10_000) {
            throw ValidationError("--latency-ms must be within ±10000, not \(latencyMs)")
        }
        do { return ScoreConfiguration(rules: try rules.rules(options), latencyMs: latencyMs) } catch {
            throw error.parameterError.map { usageError($0, flags: ["compensationOffset": "--offset"]) } ?? ValidationError("\(error)")
        }
    }

    func run() throws {
        let card: ScoreCard, sungTake: SungTake
        do {
            let scorer = try Scorer(configuration: try configuration())
            let melody = try scorer.reference(path: reference, audio: referenceAudio, lyricsPath: lyrics)
            let sung = try scorer.take(path: take, accompaniment: accompaniment, pitchIntervalMs: pitchIntervalMs)
            for t in sung.truncations { printError("ktv: warning: \(t)") }
            var aligner: (any TakeAligner)?
            if let progressLog, let device {
                let log = try LogReader.read(paths: [progressLog])
                aligner = try ProgressLogAligner(log: log, device: device, latencyMs: latencyMs ?? sung.measuredLatencyMs ?? 0, logName: progressLog)
            }
            (card, sungTake) = try scorer.judged(sung, reference: melody, aligner: aligner)
        } catch let error as AudioError {
            throw audioFailure(error)
        } catch let error as SyncError {
            throw syncFailure(error)
        } catch let error as FileIOError {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.ioError)
        } catch {
            printError("ktv: \(error)")
            throw ExitCode(KTVExitCode.dataError)
        }
        if let svg { try emit(Array(ScoreSVG.render(card, take: sungTake, title: (take as NSString).lastPathComponent).utf8), to: svg) }
        switch format {
        case .json: try emit(Array(ScoreReport.json(card, take: take, reference: reference ?? referenceAudio ?? "").serialized().utf8), to: output)
        case .text: try emit(Array(ScoreReport.text(card, take: take).utf8), to: output)
        }
    }
}
