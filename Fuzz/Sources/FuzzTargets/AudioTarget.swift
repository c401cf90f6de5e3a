#if canImport(CFuzzSupport)
import CFuzzSupport
#endif
import KTVAudio
import KTVCore
import KTVPitch

/// `fuzz-audio`: the audio reader on the bytes through libsndfile's virtual I/O (every container it
/// reads: WAV, FLAC, Ogg, MP3, AIFF, …), then on short inputs the dual-mono split analysis and pitch
/// tracking, and the pitch track written as CSV and JSON and read back (what ktv writes, ktv reads).
/// A thrown `AudioError` or `PitchError` is the clean failure; a written track that does not read
/// back is a failure (`run` returns its description).
public enum AudioTarget {
    /// Longer inputs are only opened: analysis time grows with length, and the fuzzer wants many
    /// short runs. libFuzzer's -max_len keeps the bytes small; a header may still claim hours.
    public static let maxSeconds = 1.0

    /// Crashes found by this harness and reported, not yet fixed in KTVAudio. Inputs that would hit
    /// one are recognized beforehand (with libsndfile directly) and skipped, so fuzzing goes on.
    public enum KnownIssue: String, CaseIterable, Sendable {
        /// `AudioReader` closes the libsndfile handle twice (a double free) when the audio has no
        /// frames: its initializer calls `sf_close` and throws `.empty` after every stored property
        /// is set, so `deinit` runs and closes it again. A 44-byte WAV header with no data does it.
        case emptyAudioDoubleClose = "empty-audio-double-close"

        /// Recognizes an input that hits the issue, without going near the code that has it. Only in
        /// the fuzz package (the libsndfile probe is C there); the main package's regression test
        /// goes by the file name (`known-<issue>-…`) instead, and never runs such inputs.
        public func applies(to bytes: [UInt8]) -> Bool {
            #if canImport(CFuzzSupport)
            switch self {
            case .emptyAudioDoubleClose:
                var rate: Int32 = 0, channels: Int32 = 0, frames: Int64 = 0
                guard ktv_fuzz_probe_audio(bytes, bytes.count, &rate, &channels, &frames) == 0 else { return false }
                return AudioReader.sampleRateRangeHz.contains(Double(rate)) && (1...64).contains(channels) && frames == 0
            }
            #else
            return false
            #endif
        }
    }

    nonisolated(unsafe) static let tracker = try! PitchTracker()

    public static func run(_ bytes: [UInt8], tolerating known: Set<KnownIssue> = Set(KnownIssue.allCases)) -> String? {
        if known.contains(where: { $0.applies(to: bytes) }) { return nil }
        guard let reader = try? AudioReader(bytes: bytes, name: "fuzz") else { return nil }
        guard reader.info.durationSeconds <= maxSeconds else { return nil }
        var config = SplitConfiguration()
        if reader.info.channels > 2 { config.layout = .channels(original: 0, accompaniment: reader.info.channels - 1) }
        _ = try? DualMonoSplitter.analyze(reader: reader, configuration: config)

        // Pitch tracking reads from where the reader stands: a fresh one.
        guard let again = try? AudioReader(bytes: bytes, name: "fuzz"),
              let track = try? tracker.track(reader: again, channel: .mix) else { return nil }
        do {
            _ = try PitchTrackFile.parse(Array(PitchTrackWriter.csv(track).utf8), path: "fuzz.csv")
            _ = try PitchTrackFile.parse(Array(PitchTrackWriter.json(track, input: "fuzz").serialized().utf8), path: "fuzz.json")
        } catch {
            return "the pitch track ktv wrote does not read back: \(error)"
        }
        _ = PitchTrackWriter.agoraBinary(track)
        _ = PitchTrackWriter.agoraNotes(track).serialized()
        return nil
    }
}
