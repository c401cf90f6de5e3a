import KTVAudio
import KTVCore
import KTVPitch

/// `fuzz-audio`: the audio reader on the bytes through libsndfile's virtual I/O (every container it
/// reads: WAV, FLAC, Ogg, MP3, AIFF, …) and FFmpeg's custom AVIOContext (MP4/M4A, WebM/Matroska,
/// ASF, AMR, ADTS: what libsndfile refuses), then on short inputs the dual-mono split analysis and pitch
/// tracking, and the pitch track written as CSV and JSON and read back (what ktv writes, ktv reads).
/// A thrown `AudioError` or `PitchError` is the clean failure; a written track that does not read
/// back is a failure (`run` returns its description).
public enum AudioTarget {
    /// Longer inputs are only opened: analysis time grows with length, and the fuzzer wants many
    /// short runs. libFuzzer's -max_len keeps the bytes small; a header may still claim hours.
    public static let maxSeconds = 1.0

    nonisolated(unsafe) static let tracker = try! PitchTracker()

    public static func run(_ bytes: [UInt8]) -> String? {
        guard let reader = try? AudioReader(bytes: bytes, name: "fuzz") else { return nil }
        guard reader.info.durationS <= maxSeconds else { return nil }
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
