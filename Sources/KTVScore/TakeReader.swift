import KTVCore
import KTVPitch

/// Placeholder until the take reader lands: ktv pitch CSV/JSON and `time f0` text.
public enum TakeReader {
    public static func read(path: String, pitchIntervalMs: Int? = nil) throws -> PitchContour {
        try PitchTrackFile.read(path: path)
    }
}
