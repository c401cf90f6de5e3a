import Foundation
import KTVCore
import KTVScore

/// Settings of a take's page, each declared once.
public struct TakePageConfiguration: Sendable, Equatable {
    public enum Spec {
        public static let maxEmbedMB = Parameter<Double>("maxEmbedMB", unit: "MB", range: 0.1...200, default: 25,
            "Largest recording an HTML page carries inside itself (base64 makes the page a third larger than the file).")
        public static let all: [ParameterInfo] = [maxEmbedMB.info]
    }
    public var maxEmbedMB = Spec.maxEmbedMB.defaultValue

    public init() {}

    public func validated() throws(ReportError) -> TakePageConfiguration {
        do { try Spec.maxEmbedMB.check(maxEmbedMB) } catch { throw .invalidParameter(name: error.name, value: error.value, allowed: error.allowed) }
        return self
    }
}

/// The recording a page plays.
public enum PageAudio: Sendable, Equatable {
    /// None: the take was a pitch track. `reason` says so on the page.
    case none(reason: String)
    /// A URL relative to the page (or absolute), as `TakePage.link(from:to:)` makes it.
    case link(String)
    /// The file carried inside the page as a `data:` URL.
    case embed(path: String)

    /// What the page of `take`, written at `page`, plays: the recording, linked relative to the page
    /// (or carried in it with `embed`); none for a pitch track, and the page says why.
    public static func of(take: String, page: String, embed: Bool = false) -> PageAudio {
        guard (try? Scorer.isAudio(path: take)) == true else { return .none(reason: "No recording to play: the take is a pitch track.") }
        return embed ? .embed(path: take) : .link(TakePage.link(from: page, to: take))
    }

    /// What a page with this audio shows, for the line saying where it was written.
    public var pageContents: String {
        if case .none = self { return "the timeline, the lines and the findings; no player, as the take is a pitch track" }
        return "the timeline, the lines, the findings and a player"
    }
}

/// A take's page: one self-contained HTML file (template `Templates/take.html`) showing the song's
/// timeline (reference notes, the sung pitch on the song's clock, words, line scores, judged and
/// unjudged parts), the findings and where the points went, and a player whose play head follows
/// the song. The data is the `ktv score` JSON plus what the picture needs and the JSON lacks:
/// each note's pitch as drawn, the sung contour with the recording's clock beside the song's, and
/// the stretches of song the recording covered.
public enum TakePage {
    static let page = HTMLPage(template: EmbeddedTemplates.take_html)

    public static func render(_ card: ScoreCard, sung: SungTake, take: String, reference: String, title: String,
                              audio: PageAudio, configuration: TakePageConfiguration = TakePageConfiguration()) throws(ReportError) -> String {
        String(decoding: try renderBytes(card, sung: sung, take: take, reference: reference, title: title, audio: audio, configuration: configuration),
               as: UTF8.self)
    }

    /// `render` as UTF-8, built as bytes: a long song's page is not also held as a string.
    public static func renderBytes(_ card: ScoreCard, sung: SungTake, take: String, reference: String, title: String,
                                   audio: PageAudio, configuration: TakePageConfiguration = TakePageConfiguration()) throws(ReportError) -> [UInt8] {
        let configuration = try configuration.validated()
        let data = JSONValue.object([
            ("title", .string(title)),
            ("score", ScoreReport.json(card, take: take, reference: reference)),
            ("drawn_cents", drawnCents(card)),
            ("spans", .array(sung.spansMs.map { .array([.int($0.lowerBound), .int($0.upperBound)]) })),
            ("contour", contour(sung)),
            ("audio", try audioJSON(audio, limitBytes: Int(configuration.maxEmbedMB * 1_048_576))),
        ])
        return page.renderBytes(title: "\(title) · ktv score", data: data)
    }

    /// The page of a scored take as UTF-8, titled with the take's file name unless `title` is given.
    public static func renderBytes(_ result: Scorer.Result, take: String, reference: String, title: String? = nil, audio: PageAudio,
                                   configuration: TakePageConfiguration = TakePageConfiguration()) throws(ReportError) -> [UInt8] {
        try renderBytes(result.card, sung: result.sung, take: take, reference: reference, title: title ?? (take as NSString).lastPathComponent,
                   audio: audio, configuration: configuration)
    }

    /// Each note's pitch as the page draws it (where it was judged, or the reference in the singer's
    /// key), line by line, each line made as it is written.
    static func drawnCents(_ card: ScoreCard) -> JSONValue {
        let lines = card.lines, shift = card.keyShiftCents
        return .generated(count: lines.count) { i in
            .array(lines[i].notes.map { n in (n.targetCents ?? n.note.cents.map { $0 + shift }).map { .int(Int($0.rounded())) } ?? .null })
        }
    }

    /// The sung pitch, compact: song times and recording times in ms as differences from the value
    /// before (a steady hop writes the same small number again), cents rounded (null = unvoiced).
    static func contour(_ sung: SungTake) -> JSONValue {
        func deltas(_ seconds: [Double]) -> JSONValue {
            var previous = 0
            return .array(seconds.map { s in
                let ms = Int((s * 1000).rounded())
                defer { previous = ms }
                return .int(ms - previous)
            })
        }
        let cents: [JSONValue] = sung.contour.f0Hz.map { hz in hz.map { .int(Int(ReferenceMelody.cents(hz: $0).rounded())) } ?? .null }
        let recording = sung.recordingTimesS.flatMap { $0.count == sung.contour.timesS.count ? deltas($0) : nil } ?? .null
        return .object([("song_ms", deltas(sung.contour.timesS)), ("take_ms", recording), ("cents", .array(cents))])
    }

    static func audioJSON(_ audio: PageAudio, limitBytes: Int) throws(ReportError) -> JSONValue {
        switch audio {
        case let .none(reason):
            return .object([("src", .null), ("reason", .string(reason))])
        case let .link(url):
            return .object([("src", .string(url)), ("reason", .null)])
        case let .embed(path):
            var st = stat()
            if stat(path, &st) == 0, Int(st.st_size) > limitBytes { throw .audioTooLarge(path: path, bytes: Int(st.st_size), limitBytes: limitBytes) }
            let bytes: [UInt8]
            do { bytes = try FileIO.read(path, maxBytes: limitBytes) } catch {
                if case .tooLarge = error { throw .audioTooLarge(path: path, bytes: limitBytes + 1, limitBytes: limitBytes) }
                throw .io(error)
            }
            return .object([("src", .string("data:\(mimeType(path));base64,\(Data(bytes).base64EncodedString())")), ("reason", .null)])
        }
    }

    /// What a browser is told the recording is, by its extension.
    static func mimeType(_ path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "wav", "wave": return "audio/wav"
        case "flac": return "audio/flac"
        case "mp3": return "audio/mpeg"
        case "ogg", "oga", "opus": return "audio/ogg"
        case "m4a", "mp4", "aac": return "audio/mp4"
        case "webm": return "audio/webm"
        case "aif", "aiff": return "audio/aiff"
        default: return "application/octet-stream"
        }
    }

    /// A URL for `target` relative to the folder of `page` (both as given, made absolute from the
    /// current folder), each path segment percent-encoded, so the page finds the recording wherever
    /// the two are moved together.
    public static func link(from page: String, to target: String) -> String {
        func absolute(_ p: String) -> [String] {
            let full = p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
            var parts: [String] = []
            for segment in full.split(separator: "/", omittingEmptySubsequences: true) {
                if segment == "." { continue }
                if segment == ".." { _ = parts.popLast() } else { parts.append(String(segment)) }
            }
            return parts
        }
        let from = absolute(page).dropLast(), to = absolute(target)
        var common = 0
        while common < from.count, common < to.count - 1, from[from.startIndex + common] == to[common] { common += 1 }
        let up = Array(repeating: "..", count: from.count - common)
        // A segment never reads as a scheme (`javascript:`) or a query: `:`, `;`, `?` and `#` are encoded too.
        let allowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/:;?#"))
        let down = to[common...].map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }
        return (up + down).joined(separator: "/")
    }
}
