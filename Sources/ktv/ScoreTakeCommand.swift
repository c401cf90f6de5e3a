import ArgumentParser
import Foundation
import KTVCore
import KTVScore
import KTVSync

struct ScoreTakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "take",
        abstract: "Score a take (`ktv score TAKE` is short for `ktv score take TAKE`).",
        discussion: """
        The take: audio (tracked; with --accompaniment its bleed is cancelled and the latency measured) or a pitch track
        (ktv pitch CSV/JSON, `time f0` text, or one Hz value per line with --pitch-interval-ms).
        Rules: ktv (0-100, explained note by note), agora (AgoraLyricsScore exactly), ultrastar (UltraStar Deluxe, of 10000).
        """)

    @Argument(help: "The take: audio, or a pitch track.")
    var take: String

    @OptionGroup var reference: ReferenceFlags

    @Option(help: "Rule set: ktv, agora or ultrastar.")
    var rules: ScoringRuleSet = .ktv

    @OptionGroup var ruleFlags: RuleFlags

    @Option(help: "A take given as one Hz value per line: the interval between values, ms (value k is at (k+1)·interval).")
    var pitchIntervalMs: Int?

    @Option(help: "The accompaniment played during an audio take: its bleed is cancelled and the latency measured.")
    var accompaniment: String?

    @Option(help: ArgumentHelp(ScoreConfiguration.Spec.latencyMs.help))
    var latencyMs: Double?

    @Option(help: "locked (the take runs with the song: latency, accompaniment, progress log) or free (aligned to the reference by dynamic time warping: any start, tempo, pauses).")
    var timing: Timing = .locked

    enum Timing: String, ExpressibleByArgument, CaseIterable { case locked, free }

    @Option(help: "A progress log (docs/progress-log.md): the take is placed on the song through --device's record, progress and seek events.")
    var progressLog: String?

    @Option(help: "With --progress-log: the device that recorded the take.")
    var device: String?

    @OptionGroup var tracker: TrackerOptions

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
        if timing == .free && (progressLog != nil || latencyMs != nil) { throw ValidationError("--timing free aligns the take itself; drop --progress-log and --latency-ms") }
        try reference.requireOne(reference.reference)
    }

    func configuration() throws -> ScoreConfiguration {
        let config = ScoreConfiguration(rules: try ruleFlags.rules(rules), latencyMs: latencyMs, tracker: try tracker.configuration())
        do { return try config.validated() } catch { throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)") }
    }

    func run() throws {
        let card: ScoreCard, sungTake: SungTake
        do {
            let scorer = try Scorer(configuration: try configuration())
            let melody = try scorer.reference(path: reference.reference, audio: reference.referenceAudio, lyricsPath: reference.lyrics,
                                              options: try reference.options())
            let sung = try scorer.take(path: take, accompaniment: accompaniment, pitchIntervalMs: pitchIntervalMs)
            for t in sung.truncations { printError("ktv: warning: \(t)") }
            var aligner: (any TakeAligner)? = try progressLog.map { log in
                try ProgressLogAligner(log: try LogReader.read(paths: [log]), device: device ?? "",
                                       latencyMs: latencyMs ?? sung.measuredLatencyMs ?? 0, logName: log)
            }
            if timing == .free {
                aligner = FreeTimingAligner(reference: melody, keyShift: try ruleFlags.keyShiftValue())
            }
            (card, sungTake) = try scorer.judged(sung, reference: melody, aligner: aligner)
        } catch { throw scoreFailure(error) }
        if let svg { try emit(Array(ScoreSVG.render(card, take: sungTake, title: (take as NSString).lastPathComponent).utf8), to: svg) }
        switch format {
        case .json: try emit(Array(ScoreReport.json(card, take: take, reference: reference.name).serialized().utf8), to: output)
        case .text: try emit(Array(ScoreReport.text(card, take: take).utf8), to: output)
        }
    }
}

/// The rule sets' settings as flags.
struct RuleFlags: ParsableArguments {
    @Option(help: "ktv rules: auto (estimate; whole octaves forgiven, the rest judged on intervals at a cost), none, or a shift in cents.")
    var keyShift: String = "auto"

    @Flag(help: "ktv rules: count lines outside the recording as 0 instead of leaving them out.")
    var wholeSong = false

    @Option(help: ArgumentHelp("agora rules: " + AgoraRulesConfiguration.Spec.level.help))
    var level = AgoraRulesConfiguration.Spec.level.defaultValue

    @Option(help: ArgumentHelp("agora rules: " + AgoraRulesConfiguration.Spec.compensationOffset.help))
    var offset = AgoraRulesConfiguration.Spec.compensationOffset.defaultValue

    @Option(help: ArgumentHelp("agora rules: " + AgoraRulesConfiguration.Spec.progressIntervalMs.help))
    var progressIntervalMs = AgoraRulesConfiguration.Spec.progressIntervalMs.defaultValue

    @Option(help: "ultrastar rules: easy, medium or hard (±2, ±1 or 0 semitones).")
    var difficulty: String = "medium"

    func keyShiftValue() throws -> KeyShift {
        do { return try KeyShift(parsing: keyShift) } catch { throw usageError(error) }
    }

    func rules(_ set: ScoringRuleSet) throws -> any ScoringRules {
        var options = ScoringRuleSet.Options()
        do {
            options.keyShift = try KeyShift(parsing: keyShift)
            options.ultrastar.difficulty = try UltraStarRulesConfiguration.Difficulty(parsing: difficulty)
        } catch { throw usageError(error) }
        options.wholeSong = wholeSong
        options.agora = AgoraRulesConfiguration(level: level, compensationOffset: offset, progressIntervalMs: progressIntervalMs)
        do { return try set.rules(options) } catch {
            throw error.parameterError.map { usageError($0, flags: ["compensationOffset": "--offset"]) } ?? ValidationError("\(error)")
        }
    }
}
