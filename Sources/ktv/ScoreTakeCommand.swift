import ArgumentParser
import Foundation
import KTVCore
import KTVReport
import KTVScore
import KTVSync

struct ScoreTakeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "take",
        abstract: "Score a take against a reference melody.",
        usage: """
        ktv score <take> --reference <file> [<options>]
          ktv score notes <reference> [--to json|ultrastar|midi|musicxml]   (write a reference's notes: ktv score notes --help)
        """,
        discussion: """
        The take: audio (tracked; with --accompaniment its bleed is cancelled and the latency measured) or a pitch track
        (ktv pitch CSV/JSON, `time f0` text, or one Hz value per line with --pitch-interval-ms).
        Rules: ktv (0-100, explained note by note), agora (AgoraLyricsScore exactly), ultrastar (UltraStar Deluxe, of 10000).
        `ktv score take TAKE …` is the same as `ktv score TAKE …`.
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

    @OptionGroup var stream: StreamOption

    // .unconditional: `--latency-ms -100` is a value, not an unknown flag.
    @Option(parsing: .unconditional, help: ArgumentHelp(ScoreConfiguration.Spec.latencyMs.help + " auto: estimated from the take against the reference.",
                                                        valueName: "ms|auto"))
    var latencyMs: String?

    @Option(help: "locked (the take runs with the song: latency, accompaniment, progress log) or free (aligned to the reference by dynamic time warping: any start, tempo, pauses).")
    var timing: TakeRequest.Timing = .locked

    @Option(help: "A progress log (docs/progress-log.md): the take is placed on the song through --device's record, progress and seek events.")
    var progressLog: String?

    @Option(help: "With --progress-log: the device that recorded the take.")
    var device: String?

    @OptionGroup var tracker: TrackerOptions

    @Option(help: "Draw the notes, the sung pitch and each line's score (SVG) here, atomically.")
    var svg: String?

    @Option(help: "With --svg: the lines drawn: all, judged (default; all when none was) or weakest:N (the N lowest-scored judged lines).")
    var svgLines = "judged"

    @Option(help: "Write the take's page here (HTML, one self-contained file, atomically): the song's timeline with the notes, your pitch and each line's score, the findings, and, for an audio take, a player that follows the song.")
    var html: String?

    @Flag(help: ArgumentHelp("With --html: carry the recording inside the page instead of linking to it. " + TakePageConfiguration.Spec.maxEmbedMB.help))
    var embedAudio = false

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
        if embedAudio && html == nil { throw ValidationError("--embed-audio goes with --html") }
        do { _ = try SVGLineSelection(parsing: svgLines) } catch { throw error.parameterError.map { usageError($0, flags: ["svgLines": "--svg-lines"]) } ?? ValidationError("\(error)") }
        if let accompaniment, (try? Scorer.isAudio(path: take)) == false {
            throw ValidationError("--accompaniment \(accompaniment) goes with an audio take, and \(take) is a pitch track: it has no accompaniment bleed to cancel; drop --accompaniment, or score the recording")
        }
        // Out-of-range values (--pitch-interval-ms 0) are usage errors, found before any file is read.
        do { _ = try request().validated() } catch let error as ScoreError {
            throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)")
        }
    }

    func configuration() throws -> ScoreConfiguration {
        let config = ScoreConfiguration(rules: try ruleFlags.rules(rules), latencyMs: try latency().ms, tracker: try tracker.configuration())
        do { return try config.validated() } catch { throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)") }
    }

    func run() throws {
        try refuseOutputsOverInputs([("--html", html), ("--svg", svg), ("-o", output)],
                                    inputs: [("the take", take), ("--reference", reference.reference), ("--reference-audio", reference.referenceAudio),
                                             ("--lyrics", reference.lyrics), ("--accompaniment", accompaniment), ("--progress-log", progressLog)])
        let result: Scorer.Result
        do {
            let scorer = try Scorer(configuration: try configuration())
            let (melody, truncations) = try scorer.readReference(path: reference.reference, audio: reference.referenceAudio,
                                                                 lyricsPath: reference.lyrics, options: try reference.options())
            for t in truncations { printError("ktv: warning: \(t)") }
            result = try scorer.score(try request(), reference: melody)
        } catch { throw scoreFailure(error) }
        for t in result.truncations { printError("ktv: warning: \(t)") }
        if let html {
            let audio = PageAudio.of(take: take, page: html, embed: embedAudio)
            try writePage(result, audio: audio, to: html)
            if html != "-" { printError("ktv: wrote \(html) (open it in a browser: \(audio.pageContents))") }
        }
        if let svg {
            let picture = ScoreSVG.render(result.card, take: result.sung, title: (take as NSString).lastPathComponent,
                                          lines: (try? SVGLineSelection(parsing: svgLines)) ?? .judged)
            try emit(Array(picture.utf8), to: svg)
        }
        switch format {
        case .json: try emit(Array(ScoreReport.json(result.card, take: take, reference: reference.name).serialized().utf8), to: output)
        case .text: try emit(Array(ScoreReport.text(result.card, take: take).utf8), to: output)
        }
    }

    /// The take's page, playing `audio`.
    func writePage(_ result: Scorer.Result, audio: PageAudio, to html: String) throws {
        let page: String
        do {
            page = try TakePage.render(result.card, sung: result.sung, take: take, reference: reference.name,
                                       title: (take as NSString).lastPathComponent, audio: audio)
        } catch { throw reportFailure(error) }
        try emit(Array(page.utf8), to: html)
    }

    /// The take and how to score it, as the library takes it.
    func request() throws -> TakeRequest {
        TakeRequest(take: take, accompaniment: accompaniment, pitchIntervalMs: pitchIntervalMs, timing: timing, latencyMs: try latency().ms,
                    progressLog: progressLog, device: device, rules: try ruleFlags.rules(rules), keyShift: try ruleFlags.keyShiftValue(),
                    estimateLatency: try latency().auto, stream: try stream.checked())
    }

    /// `--latency-ms`: a number, or `auto`.
    func latency() throws -> (ms: Double?, auto: Bool) {
        try parseLatency(latencyMs)
    }
}

/// The rule sets' settings as flags.
struct RuleFlags: ParsableArguments {
    @Option(parsing: .unconditional, help: "ktv rules: auto (estimate; whole octaves forgiven, the rest judged on intervals at a cost), none, or a shift in cents.")
    var keyShift: String = "auto"

    @Flag(help: "ktv rules: count lines outside the recording as 0 instead of leaving them out.")
    var wholeSong = false

    @Option(help: AgoraRulesConfiguration.Spec.level.optionHelp("agora rules: "))
    var level = AgoraRulesConfiguration.Spec.level.defaultValue

    @Option(help: AgoraRulesConfiguration.Spec.compensationOffset.optionHelp("agora rules: "))
    var agoraOffset = AgoraRulesConfiguration.Spec.compensationOffset.defaultValue

    // The old name of --agora-offset (it read as a time, and is a score compensation).
    @Option(name: .customLong("offset"), help: .hidden)
    var oldOffset: Int?

    @Option(help: AgoraRulesConfiguration.Spec.progressIntervalMs.optionHelp("agora rules: "))
    var progressIntervalMs = AgoraRulesConfiguration.Spec.progressIntervalMs.defaultValue

    @Option(help: "ultrastar rules: easy, medium or hard (±2, ±1 or 0 semitones).")
    var difficulty: String = "medium"

    func validate() throws {
        if oldOffset != nil { deprecatedFlag("--offset", "--agora-offset") }
    }

    func keyShiftValue() throws -> KeyShift {
        do { return try KeyShift(parsing: keyShift) } catch { throw usageError(error) }
    }

    /// The rule sets' settings (not yet checked: `rules(_:)` checks them).
    func options() throws -> ScoringRuleSet.Options {
        var options = ScoringRuleSet.Options()
        do {
            options.keyShift = try KeyShift(parsing: keyShift)
            options.ultrastar.difficulty = try UltraStarRulesConfiguration.Difficulty(parsing: difficulty)
        } catch { throw usageError(error) }
        options.wholeSong = wholeSong
        options.agora = AgoraRulesConfiguration(level: level, compensationOffset: oldOffset ?? agoraOffset, progressIntervalMs: progressIntervalMs)
        return options
    }

    func rules(_ set: ScoringRuleSet) throws -> any ScoringRules {
        let options = try options()
        do { return try set.rules(options) } catch {
            throw error.parameterError.map { usageError($0, flags: ["compensationOffset": oldOffset == nil ? "--agora-offset" : "--offset"]) } ?? ValidationError("\(error)")
        }
    }
}
