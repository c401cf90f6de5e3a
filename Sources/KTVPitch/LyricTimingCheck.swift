import Foundation
import KTVAudio
import KTVCore
import KTVLyrics

/// `ktv lyrics validate --audio`: where the voice sings against where the lyric words are.
///
/// A dual-mono track is split first and its vocal estimate tracked as it is made (no file is
/// written); any other audio is tracked as a vocal stem. The voicing track is then aligned with the
/// words' spans (`VoicingAlignment`): the best global shift, and the lines still mostly unvoiced there;
/// and with the lines by `LyricSync`: when the map's sections differ (a cut, an added section, another
/// speed), a `different-edit` warning gives each section's offset instead of the one shift.
public enum LyricTimingCheck {
    /// The outcome: findings to add to the lyric file's, the JSON block for the report, and any input
    /// that stopped decoding early.
    public struct Result: Sendable {
        public var findings: FileFindings
        public var truncations: [AudioTruncation]
    }

    /// How the lyric times compare with the voice in `audio`.
    /// - Parameters:
    ///   - layout: the dual-mono layout (`auto` decides from the signals).
    ///   - alignment: the shift search (`searchMs`) and the mostly-unvoiced threshold.
    ///   - offsetSign: the `[offset:]` convention in force, to word the suggested tag.
    public static func check(_ findings: FileFindings, parsed: ParsedLyrics, audio: String, audioStream: Int? = nil, layout: SplitLayout,
                             alignment: AlignmentConfiguration, sync: LyricSyncConfiguration = LyricSyncConfiguration(),
                             offsetSign: OffsetSign) throws -> Result {
        let alignment = try alignment.validated()
        var result = findings
        let vocal = try PitchTracker(configuration: PitchConfiguration()).trackVocals(path: audio, stream: audioStream, layout: layout)
        let track = vocal.track, note = vocal.note, truncations = vocal.track.truncations
        var spans: [SungSpan] = []
        for (i, line) in parsed.lyrics.lines.enumerated() {
            if line.words.isEmpty {
                spans.append(SungSpan(startMs: line.startMs, endMs: line.endMs, group: i))
            } else {
                for w in line.words where !isBlank(w.text) { spans.append(SungSpan(startMs: w.startMs, endMs: w.endMs, group: i)) }
            }
        }
        let a = try VoicingAlignment.align(spans: spans, voiced: track.contour.f0Hz.map { $0 != nil }, hopMs: track.hopS * 1000,
                                           configuration: alignment)
        // The same map `lyrics sync` finds: when its sections' offsets differ, one shift is wrong for
        // some of the lines, and the finding says so instead.
        let map = try? LyricSync.align(lines: LyricRetiming.inputs(parsed.lyrics), voiced: track.contour.f0Hz.map { $0 != nil },
                                       hopMs: track.hopS * 1000, configuration: sync)
        let differentEdit = map.map { $0.sectionsDiffer() || abs($0.ratio - 1) > 0.01 } ?? false
        let shift = Int(a.bestShiftMs.rounded())
        // The tag that moves every time by `shift` under the reading convention in force.
        let tag = offsetSign == .subtract ? -shift : shift
        result.diagnostics.append(.info("audio-alignment",
            "against \(audio) (\(note)): best shift \(shift) ms (add to every lyric time); \(pct(a.voicedShareAtBest)) of word time voiced there, \(pct(a.voicedShareAtZero)) as written"))
        if differentEdit, let map {
            let sections = map.sections.map { sec in
                "lines \(lineNumber(sec.lines.lowerBound, parsed))-\(lineNumber(sec.lines.upperBound, parsed)) \(sec.offsetMs > 0 ? "+" : "")\(sec.offsetMs) ms"
            }
            let cut = map.dropped.isEmpty ? "" : "; not in the audio (cut): lines \(map.dropped.map { String(lineNumber($0, parsed)) }.joined(separator: ", "))"
            let speed = abs(map.ratio - 1) > 0.005 ? ", the audio \(String(format: "%.1f", abs(map.ratio - 1) * 100))% \(map.ratio > 1 ? "slower" : "faster")" : ""
            result.diagnostics.append(.warning(differentEditRule,
                "the lyrics follow a different edit of the song: one shift does not fit every line; sections: \(sections.joined(separator: ", "))\(speed)\(cut)"))
        } else if abs(shift) > 200 {
            result.diagnostics.append(.warning("lyrics-offset",
                "the lyrics are \(abs(shift)) ms \(shift < 0 ? "late" : "early") against the audio; move every time by \(shift) ms, or add `[offset:\(tag > 0 ? "+" : "")\(tag)]` (read with the offset sign `\(offsetSign.rawValue)`)"))
        }
        for g in a.mostlyUnvoicedGroups where !differentEdit {
            let line = parsed.lyrics.lines[g]
            result.diagnostics.append(.warning("unvoiced-line", line: line.sourceLine,
                "only \(pct(a.groupShares[g] ?? 0)) of this line's word time is sung (after the best shift of \(shift) ms): `\(line.text.trimmingCharacters(in: .whitespaces))` may be mistimed"))
        }
        result.diagnostics.sort { ($0.line ?? 0) < ($1.line ?? 0) }
        result.extra = [("audio", .object([
            ("track", .string(audio)),
            ("best_shift_ms", .int(shift)),
            ("voiced_share", .double((a.voicedShareAtBest * 1000).rounded() / 1000)),
            ("voiced_share_at_zero", .double((a.voicedShareAtZero * 1000).rounded() / 1000)),
            ("equivalent_offset_tag", abs(shift) > 200 ? .string("[offset:\(tag > 0 ? "+" : "")\(tag)]") : .null),
            ("mostly_unvoiced_lines", .array(a.mostlyUnvoicedGroups.map { .int(parsed.lyrics.lines[$0].sourceLine ?? $0 + 1) })),
            ("different_edit", .bool(differentEdit)),
            ("ratio", map.map { .double(($0.ratio * 10000).rounded() / 10000) } ?? .null),
            ("sections", .array((map?.sections ?? []).map { sec in .object([
                ("first_line", .int(lineNumber(sec.lines.lowerBound, parsed))), ("last_line", .int(lineNumber(sec.lines.upperBound, parsed))),
                ("lyric_start_ms", .int(sec.lyricStartMs)), ("audio_start_ms", .int(sec.audioStartMs)),
                ("offset_ms", .int(sec.offsetMs)), ("ratio", .double((sec.ratio * 10000).rounded() / 10000)), ("confidence", .double(sec.confidence)),
            ]) })),
            ("dropped_lines", .array((map?.dropped ?? []).map { .int(lineNumber($0, parsed)) })),
        ]))]
        return Result(findings: result, truncations: truncations)
    }

    /// `LyricsBatch.validate(files)` with the first file's timing also checked against `audio`: the
    /// lyric file is parsed once, and its model feeds the audio check.
    /// `audioStream`: the audio stream of a container (from 1; nil: the first).
    public static func validate(_ files: [String], options: LyricsParseOptions, audio: String, audioStream: Int? = nil, layout: SplitLayout,
                                alignment: AlignmentConfiguration) throws -> (results: [FileFindings], truncations: [AudioTruncation]) {
        guard let first = files.first else { return ([], []) }
        let (findings, parsed) = LyricsBatch.readOne(first, options: options)
        var checked = findings, truncations: [AudioTruncation] = []
        if let parsed {
            let r = try check(findings, parsed: parsed, audio: audio, audioStream: audioStream, layout: layout, alignment: alignment, offsetSign: options.offsetSign)
            checked = r.findings
            truncations = r.truncations
        }
        return ([checked] + LyricsBatch.validate(Array(files.dropFirst()), options: options), truncations)
    }

    /// The rule of the finding that the lyrics follow another edit (front ends add how to fix it).
    public static let differentEditRule = "different-edit"

    static func lineNumber(_ index: Int, _ parsed: ParsedLyrics) -> Int { parsed.lyrics.lines[index].sourceLine ?? index + 1 }

    static func pct(_ v: Double) -> String { "\(Int((v * 100).rounded()))%" }

    static func isBlank(_ s: String) -> Bool { s.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\u{3000}" } }
}
