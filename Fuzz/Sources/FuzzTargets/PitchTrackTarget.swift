import KTVCore
import KTVPitch

/// `fuzz-pitchtrack`: the pitch-track reader on the bytes, then `ktv pitch eval`'s path
/// (`MelodyEvaluation`: align, scores at 50, 25 and 10 cents, the JSON and text reports) on two
/// tracks: the whole input against itself, and its first half against its second half (split at a
/// line break) both ways.
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

    /// What `ktv pitch eval` does: align, score at 50 cents and at 25 and 10, render both reports.
    static func eval(_ reference: PitchContour, _ estimate: PitchContour) {
        guard let evaluation = try? MelodyEvaluation.evaluate(reference: reference, estimate: estimate,
                                                              referenceName: "ref", estimateName: "est",
                                                              configuration: MelodyMetricsConfiguration()) else { return }
        _ = evaluation.json.serialized()
        _ = evaluation.text
    }
}
