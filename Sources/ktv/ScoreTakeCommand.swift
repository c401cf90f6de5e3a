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
        Rules: ktv (0-100, explained note by note and judged on intonation, rhythm, vibrato, voice quality, dynamics and pitch range, with a 1-5 expert grade), agora (AgoraLyricsScore exactly), ultrastar (UltraStar Deluxe, of 10000).
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

    @Flag(help: ArgumentHelp("With --html: carry the recording inside the page (base64: the page a third larger than the file) instead of linking to it; a recording over \(Int(TakePageConfiguration.Spec.maxEmbedMB.defaultValue)) MB is refused."))
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
        if let accompaniment, let why = TakeRequest.accompanimentRefusal(takePath: take, name: take) {
            throw ValidationError("--accompaniment \(accompaniment) \(why); drop --accompaniment, or score the recording")
        }
        // Out-of-range values (--pitch-interval-ms 0) are usage errors, found before any file is read.
        do { _ = try request().validated() } catch let error as ScoreError {
            throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)")
        }
    }

    func configuration() throws -> ScoreConfiguration {
        let config = ScoreConfiguration(rules: try ruleFlags.rules(rules), latencyMs: try latency()?.ms, tracker: try tracker.configuration())
        do { return try config.validated() } catch { throw error.parameterError.map { usageError($0) } ?? ValidationError("\(error)") }
    }

    func run() throws {
        try refuseOutputsOverInputs([("--html", html), ("--svg", svg), ("-o", output)],
                                    inputs: [("the take", take), ("--reference", reference.reference), ("--reference-audio", reference.referenceAudio),
                                             ("--lyrics", reference.lyrics), ("--accompaniment", accompaniment), ("--progress-log", progressLog)])
        let result: Scorer.Result
        do {
            result = try Scorer(configuration: try configuration()).score(try request(), referencePath: reference.reference, audio: reference.referenceAudio,
                                                                           lyricsPath: reference.lyrics, options: try reference.options())
        } catch { throw scoreFailure(error) }
        for t in result.truncations { printError("ktv: warning: \(t)") }
        if let html {
            let audio = PageAudio.of(take: take, page: html, embed: embedAudio)
            let page: [UInt8]
            do { page = try TakePage.renderBytes(result, take: take, reference: reference.name, audio: audio) } catch { throw failure(error) }
            try emit(page, to: html)
            if html != "-" { printError("ktv: wrote \(html) (open it in a browser: \(audio.pageContents))") }
        }
        if let svg {
            let lines = (try? SVGLineSelection(parsing: svgLines)) ?? .judged
            try emit(Array(ScoreSVG.render(result.card, take: result.sung, title: (take as NSString).lastPathComponent, lines: lines).utf8), to: svg)
        }
        switch format {
        case .json: try emitStreaming(to: output) { put in try ScoreReport.json(result.card, take: take, reference: reference.name).write(to: put) }
        case .text: try emit(Array(ScoreReport.text(result.card, take: take).utf8), to: output)
        }
    }

    /// The take and how to score it, as the library takes it.
    func request() throws -> TakeRequest {
        let latency = try latency()
        return TakeRequest(take: take, accompaniment: accompaniment, pitchIntervalMs: pitchIntervalMs, timing: timing, latencyMs: latency?.ms,
                           progressLog: progressLog, device: device, rules: try ruleFlags.rules(rules), keyShift: try ruleFlags.options().keyShift,
                           estimateLatency: latency?.estimates ?? false, stream: try stream.checked())
    }

    /// `--latency-ms`: a number, or `auto`; nil when not given.
    func latency() throws -> LatencySetting? {
        try parseLatency(latencyMs)
    }
}
