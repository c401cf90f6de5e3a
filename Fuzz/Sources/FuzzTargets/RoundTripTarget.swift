import KTVCore
import KTVLyrics

/// `fuzz-roundtrip`: parse (format detected); if it parses, write with every output format and
/// read the result back. A writer may refuse a model it cannot represent (a thrown
/// `LyricsError.cannotWrite`), and formats lose information legitimately (plain LRC has no word
/// timing and trims line text, YRC has no translations), so the properties are:
///
/// - what ktv writes, ktv reads back (with the format detected, as `ktv lyrics parse` would);
/// - one trip through a format brings a model to what the format can hold, after which trips are
///   exact: with m₁ = read(write(m)), write(read(write(m₁))) == write(m₁), byte for byte;
/// - JSON keeps every line exactly (times, text, translation, words with romanization, KRC field
///   and pitch) and the reference pitch.
///
/// `run` returns a description of the first property broken, nil when all hold. Breaks already
/// found and reported (`KnownIssue`) are tolerated unless the caller asks otherwise, so the fuzzer
/// keeps looking for new ones; the regression test runs their inputs strictly, as known issues.
public enum RoundTripTarget {
    /// Round-trip breaks found by this harness and reported, not yet fixed in KTVLyrics. Each is
    /// recognized from the model being written, for the formats it concerns.
    public enum KnownIssue: String, CaseIterable, Sendable {
        /// The JSON reader does not read `reference_pitch` back (pitch files converted to json).
        case jsonDropsReferencePitch = "json-drops-reference-pitch"
        /// Format detection looks for the `"lines"` and `"format"` keys of ktv JSON in the first 4096
        /// bytes only, and the writer puts `tags` before `lines`: a model whose tags take more than
        /// that (a long `[language:]`, or control characters escaped as `\u0000`) is written as JSON
        /// that is not detected as JSON (read as YRC: no lines, or refused with a `.json` name).
        case jsonLinesBeyondDetection = "json-lines-beyond-detection"
        /// JSONSerialization on Linux drops a raw U+FEFF that starts a string. `JSONValue` escapes it
        /// (`\ufeff`), but the lyric JSON writer's own string writer (`JSONModel.appendString`, used
        /// for line and word text, translations and romanizations) does not yet.
        case jsonLeadingFEFF = "json-leading-feff"
        /// (E)LRC writes a line with no text as `[mm:ss.xxx]` alone, which the reader takes for the
        /// end row of the line before (or drops as an empty line).
        case lrcEmptyLine = "lrc-empty-line"
        /// (E)LRC writes text holding `<m:s>` or `[m:s]` verbatim; the reader takes it for word or line stamps.
        case lrcStampInText = "lrc-stamp-in-text"

        func applies(to model: Lyrics, _ format: LyricsOutputFormat) -> Bool {
            switch self {
            case .jsonDropsReferencePitch:
                return format == .json && model.referencePitch != nil
            case .jsonLinesBeyondDetection:
                guard format == .json, let written = try? LyricsWriter.write(model, as: .json) else { return false }
                let sample = String(decoding: written.bytes.prefix(4096), as: UTF8.self)
                return !(sample.contains("\"lines\"") && sample.contains("\"format\""))
            case .jsonLeadingFEFF:
                guard format == .json else { return false }
                func starts(_ s: String?) -> Bool { s?.unicodeScalars.first == "\u{FEFF}" }
                return model.lines.contains { line in
                    starts(line.text) || starts(line.translation)
                        || line.words.contains { starts($0.text) || starts($0.romanization) }
                }
            case .lrcEmptyLine:
                guard format == .lrc || format == .elrc else { return false }
                return model.lines.contains { line in
                    let words = format == .elrc ? line.words.filter { !$0.text.isEmpty } : []
                    return words.isEmpty && isBlankText(line.text)
                }
            case .lrcStampInText:
                guard format == .lrc || format == .elrc else { return false }
                return model.lines.contains { line in
                    looksLikeStamp(line.text) || format == .elrc && line.words.contains { looksLikeStamp($0.text) }
                }
            }
        }
    }

    public static func run(_ bytes: [UInt8], tolerating known: Set<KnownIssue> = Set(KnownIssue.allCases)) -> String? {
        guard let parsed = try? LyricsReader.read(bytes) else { return nil }
        for format in LyricsOutputFormat.allCases {
            if let failure = check(parsed.lyrics, format, tolerating: known) { return failure }
        }
        return nil
    }

    static func check(_ model: Lyrics, _ format: LyricsOutputFormat, tolerating known: Set<KnownIssue>) -> String? {
        var models: [Lyrics] = [model]
        guard let failure = check(model, format, trace: &models) else { return nil }
        let issues = KnownIssue.allCases.filter { issue in models.contains { issue.applies(to: $0, format) } }
        if !issues.isEmpty, Set(issues).isSubset(of: known) { return nil }
        return failure + (issues.isEmpty ? "" : "\n(known issues involved: \(issues.map(\.rawValue).joined(separator: ", ")))")
    }

    /// One format's trips; `trace` collects every model written on the way.
    static func check(_ model: Lyrics, _ format: LyricsOutputFormat, trace models: inout [Lyrics]) -> String? {
        guard let first = try? LyricsWriter.write(model, as: format) else { return nil }
        // SRT is written, never read.
        guard format != .srt else { return nil }
        let m1: Lyrics
        switch reread(first.bytes, like: model, format) {
        case let .success(m): m1 = m; models.append(m)
        case let .failure(failure): return failure.message
        }
        if format == .json, lines(m1) != lines(model) {
            return "json: the lines read back differ from the lines written\n--- written model:\n\(lines(model))\n--- read back:\n\(lines(m1))"
        }
        if format == .json, m1.referencePitch != model.referencePitch {
            return "json: the reference pitch read back differs from the one written\n--- written:\n\(String(describing: model.referencePitch).prefix(2000))\n--- read back:\n\(String(describing: m1.referencePitch).prefix(2000))"
        }
        let second: WrittenLyrics
        do { second = try LyricsWriter.write(m1, as: format) } catch {
            return "\(format.rawValue): the model read back from ktv's own output cannot be written again: \(error)\n--- first output:\n\(show(first.bytes, format))"
        }
        let m2: Lyrics
        switch reread(second.bytes, like: m1, format) {
        case let .success(m): m2 = m; models.append(m)
        case let .failure(failure): return failure.message
        }
        let third: WrittenLyrics
        do { third = try LyricsWriter.write(m2, as: format) } catch {
            return "\(format.rawValue): the model read back from ktv's own output cannot be written again: \(error)\n--- second output:\n\(show(second.bytes, format))"
        }
        if third.bytes != second.bytes {
            return "\(format.rawValue): a second round trip changes the output (write → read → write differs)\n--- first output:\n\(show(first.bytes, format))\n--- second output:\n\(show(second.bytes, format))\n--- third output:\n\(show(third.bytes, format))"
        }
        return nil
    }

    struct Failure: Error { var message: String }

    /// Reads ktv's own output back; `like` is the model written.
    static func reread(_ bytes: [UInt8], like model: Lyrics, _ format: LyricsOutputFormat) -> Result<Lyrics, Failure> {
        var back: Lyrics
        do { back = try LyricsReader.read(bytes).lyrics } catch {
            // A model with nothing to write (no lines; no tags but `offset` or `language`, which are not
            // written) gives an empty file or a lone BOM, which no reader takes.
            if isBlank(bytes) { return .success(model) }
            return .failure(Failure(message: "\(format.rawValue): ktv cannot read what it wrote: \(error)\n--- written:\n\(show(bytes, format))"))
        }
        // Where the model came from is not content: its source format and the `[offset:]` shift applied
        // while reading it (JSON records both; reading JSON gives `json` and applies no shift).
        back.format = model.format
        back.appliedShiftMs = model.appliedShiftMs
        return .success(back)
    }

    static func isBlank(_ bytes: [UInt8]) -> Bool {
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        return body.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    static func isBlankText(_ s: String) -> Bool {
        s.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    }

    /// `<` or `[` followed by a digit, or a minus sign and a digit: what LRC readers take for a stamp.
    static func looksLikeStamp(_ s: String) -> Bool {
        let b = Array(s.utf8)
        for i in b.indices where b[i] == UInt8(ascii: "<") || b[i] == UInt8(ascii: "[") {
            var j = i + 1
            if j < b.count, b[j] == UInt8(ascii: "-") { j += 1 }
            if j < b.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b[j]) { return true }
        }
        return false
    }

    /// Lines without `sourceLine` (where they came from is not part of the content).
    static func lines(_ l: Lyrics) -> [LyricLine] {
        l.lines.map { var line = $0; line.sourceLine = nil; return line }
    }

    static func show(_ bytes: [UInt8], _ format: LyricsOutputFormat) -> String {
        if format == .krc {
            var options = LyricsParseOptions()
            options.format = .krc
            if let plain = try? LyricsReader.read(bytes, options: options),
               let text = try? LyricsWriter.write(plain.lyrics, as: .krcText) {
                return "(encrypted KRC; its text written again:) " + show(text.bytes, .krcText)
            }
        }
        return String(decoding: bytes.prefix(4096), as: UTF8.self).debugDescription
    }
}
