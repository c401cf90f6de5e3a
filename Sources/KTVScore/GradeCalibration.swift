import KTVCore

/// The ktv rules' free-timing score put on the scale of human graders: a monotone piecewise-linear
/// map whose knots are the mean raw scores of MASTmelody's four grade levels (1 completely off,
/// 2 major mistakes, 3 minor mistakes, 4 perfect; 454 graded performances of 17 development
/// melodies) sent to 25, 50, 75 and 92, continued linearly past the end knots and clamped to 0-100.
/// Bands: level 1 below 40, 2 from 40, 3 from 65, 4 from 85. Four numbers, fitted on all the
/// development melodies; fitted leaving each melody out the same map puts 61.5 % of held-out
/// performances in their level's band (`make assess`). Only meaningful for sing-back takes judged
/// with free timing by the ktv rules.
public enum GradeCalibration {
    /// (raw mean of the level, calibrated anchor), rising (`ktv-bench assess` prints the fit).
    public static let knots: [(raw: Double, calibrated: Double)] = [(41.5, 25), (56.5, 50), (71.8, 75), (83.2, 92)]

    /// The calibrated 0-100 score of a raw ktv-rules score.
    public static func calibrated(_ raw: Double) -> Double { interpolated(raw, knots: knots) }

    /// `raw` on the piecewise-linear map through `knots` (raw strictly rising), continued past the
    /// end knots and clamped to 0-100; one knot maps every score to its value. `ktv-bench assess`
    /// fits knots with the same map.
    public static func interpolated(_ raw: Double, knots k: [(raw: Double, calibrated: Double)]) -> Double {
        guard k.count >= 2 else { return min(100, max(0, k.first?.calibrated ?? 0)) }
        var i = 0
        while i < k.count - 2, raw > k[i + 1].raw { i += 1 }
        let (a, b) = (k[i], k[i + 1])
        let v = a.calibrated + (raw - a.raw) * (b.calibrated - a.calibrated) / (b.raw - a.raw)
        return min(100, max(0, v))
    }

    /// The graders' level (1-4) whose band holds a calibrated score.
    public static func level(_ calibrated: Double) -> Int {
        calibrated >= 85 ? 4 : calibrated >= 65 ? 3 : calibrated >= 40 ? 2 : 1
    }
}
