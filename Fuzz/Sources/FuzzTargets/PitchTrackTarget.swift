import KTVCore
import KTVPitch

/// `fuzz-pitchtrack`: the pitch-track reader on the bytes, then `ktv pitch eval`'s path (align,
/// scores at the default and the 25/10-cent tolerances) on two tracks: the whole input against
/// itself, and its first half against its second half (split at a line break) both ways.
/// A thrown `PitchError` is the clean failure.
public enum PitchTrackTarget {
    public static func run(_ bytes: [UInt8]) {
        let whole = try? PitchTrackFile.parse(bytes, path: "fuzz")
        var mid = bytes.count / 2
        while mid < bytes.count, bytes[mid] != 0x0A { mid += 1 }
        let a = try? PitchTrackFile.parse(Array(bytes[..<mid]), path: "a")
        let b = try? PitchTrackFile.parse(Array(bytes[mid...]), path: "b")
        if let whole { eval(whole, whole) }
        if let a, let b {
            eval(a, b)
            eval(b, a)
        }
    }

    static func eval(_ reference: MelodySeries, _ estimate: MelodySeries) {
        let config = MelodyMetricsConfiguration()
        guard let aligned = try? MelodyMetrics.align(reference: reference, estimate: estimate,
                                                     baseFrequencyHz: config.baseFrequencyHz),
              let valid = try? config.validated() else { return }
        _ = aligned.scores(valid)
        for cents in [25.0, 10.0] {
            _ = aligned.rawPitchAccuracy(toleranceCents: cents)
            _ = aligned.rawChromaAccuracy(toleranceCents: cents)
        }
    }
}
