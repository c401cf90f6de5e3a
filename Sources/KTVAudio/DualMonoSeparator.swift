import Foundation
import KTVCore

/// Step 3 of the dual-mono split, the streaming pass: writes the channels and the vocal estimate
/// v = o − g(t)·a(t − lag) block by block.
///
/// Each block's gain is a least-squares fit over the block and `gainContextBlocks` blocks on either
/// side, made on the time-frequency bins the accompaniment dominates (`SpectralGainFit`); gains are
/// interpolated linearly between block centres. Memory holds 2·context + 3 blocks, whatever the
/// file's length. One separator per input: `init` takes what the analysis decided, `run` reads the
/// reader to its end.
final class DualMonoSeparator {
    let reader: AudioReader
    let o: Int, c: Int, lag: Int, gain: Double
    let config: SplitConfiguration

    init(reader: AudioReader, original: Int, accompaniment: Int, lag: Int, gain: Double, config: SplitConfiguration) {
        self.reader = reader
        o = original
        c = accompaniment
        self.lag = lag
        self.gain = gain
        self.config = config
    }

    /// Writes the requested outputs into `set` (the caller commits it) and measures the vocal.
    func run(outputs: SplitOutputs, into set: AtomicOutputSet, analysis: SplitAnalysis) throws -> SplitResult {
        let reader = self.reader, o = self.o, c = self.c, lag = self.lag, gain = self.gain, config = self.config

        let path = reader.path
        let info = reader.info
        let rate = info.sampleRate
        let format = outputs.format ?? AudioFileFormat.wavMatching(info)
        func writer(_ p: String?) throws -> AudioWriter? {
            guard let p else { return nil }
            return try AudioWriter(output: set.add(p), sampleRate: rate, channels: 1, format: format)
        }
        let origWriter = try writer(outputs.original)
        let accWriter = try writer(outputs.accompaniment)
        let vocWriter = try writer(outputs.vocals)

        let context = config.gainContextBlocks
        let block = max(Int(config.gainBlockS * rate), abs(lag) + 1, 1024)
        let n = info.channels
        var interleaved: [Float] = []
        var eof = false

        // Blocks by index; entries before `firstKept` are released.
        var orig: [[Float]] = [], starts: [Int] = [], sums: [(xa: Double, aa: Double)] = []
        var accStream: [Float] = []  // accompaniment samples from frame accBase on
        var accBase = 0
        var totalRead = 0

        func readBlock() throws(AudioError) -> Bool {
            if eof { return false }
            var b: [Float] = []
            b.reserveCapacity(block)
            while b.count < block {
                let got = try reader.read(into: &interleaved, frames: block - b.count)
                if got == 0 { eof = true; break }
                for f in 0..<got {
                    b.append(interleaved[f * n + o])
                    accStream.append(interleaved[f * n + c])
                }
            }
            if b.isEmpty { return false }
            orig.append(b)
            starts.append(totalRead)
            totalRead += b.count
            return true
        }

        /// The accompaniment aligned with the original over frames [start, start+count): acc[t − lag], 0 outside.
        func alignedAcc(_ start: Int, _ count: Int) -> [Float] {
            var out = [Float](repeating: 0, count: count)
            for i in 0..<count {
                let j = start + i - lag - accBase
                if j >= 0 && j < accStream.count { out[i] = accStream[j] }
            }
            return out
        }

        var frames = 0
        var energyOrig = 0.0, energyVoc = 0.0
        let activityLen = max(1, Int(0.05 * rate))
        var vocalFramesRMS: [Double] = []
        var pendingV = 0.0, pendingO = 0.0, pendingCount = 0
        var usedGains: [Double] = []
        var lastGain = gain

        func gainAt(_ k: Int) -> Double {
            var xa = 0.0, aa = 0.0
            for j in max(0, k - context)...min(sums.count - 1, k + context) {
                xa += sums[j].xa
                aa += sums[j].aa
            }
            // A near-silent accompaniment says nothing about the gain: keep the last one.
            let span = Double(orig[k].count * (2 * context + 1))
            if aa > 1e-7 * span { lastGain = xa / aa }
            return lastGain
        }

        var gainFit = SpectralGainFit(commonGain: gain)
        var aligned: [Int: [Float]] = [:]  // aligned accompaniment of blocks fitted but not yet written
        var k = 0
        var gainCache: [Int: Double] = [:]
        while true {
            // Read far enough ahead for block k+1's gain window and the lag.
            while orig.count < k + context + 3, try readBlock() {}
            if k >= orig.count { break }
            // Sums for every block whose aligned accompaniment is complete (or the file has ended).
            while sums.count < orig.count && (eof || sums.count + 1 < orig.count) {
                let j = sums.count
                let a = alignedAcc(starts[j], orig[j].count)
                sums.append(gainFit.sums(orig[j], a))
                aligned[j] = a
            }
            func g(_ j: Int) -> Double {
                if let v = gainCache[j] { return v }
                let v = gainAt(j)
                gainCache[j] = v
                return v
            }
            let cur = orig[k]
            let start = starts[k]
            let acc = aligned.removeValue(forKey: k) ?? alignedAcc(start, cur.count)
            let gk = g(k)
            let gPrev = k > 0 ? g(k - 1) : gk
            let gNext = k + 1 < orig.count ? g(k + 1) : gk
            usedGains.append(gk)
            let centre = Double(cur.count) / 2
            let prevHalf = k > 0 ? Double(orig[k - 1].count) / 2 : centre
            let nextHalf = k + 1 < orig.count ? Double(orig[k + 1].count) / 2 : centre
            // The gain ramps linearly from the previous block's centre to this one's, then to the next.
            var voc = [Float](repeating: 0, count: cur.count)
            let half = cur.count / 2
            let stepIn = Float((gk - gPrev) / (centre + prevHalf)), stepOut = Float((gNext - gk) / (centre + nextHalf))
            cur.withUnsafeBufferPointer { x in
                acc.withUnsafeBufferPointer { a in
                    voc.withUnsafeMutableBufferPointer { v in
                        for i in 0..<half {
                            let gi = Float(gk) - stepIn * (Float(centre) - Float(i) - 0.5)
                            v[i] = x[i] - gi * a[i]
                        }
                        for i in half..<x.count {
                            let gi = Float(gk) + stepOut * (Float(i) + 0.5 - Float(centre))
                            v[i] = x[i] - gi * a[i]
                        }
                    }
                }
            }
            if let w = origWriter { try w.write(mono: cur) }
            if let w = accWriter {
                // The accompaniment channel as it is (not shifted), same frames as the original.
                try w.write(mono: Array(accStream[(start - accBase)..<(start - accBase + cur.count)]))
            }
            if let w = vocWriter { try w.write(mono: voc) }
            try outputs.vocalBlocks?(voc)
            // Statistics over 50 ms frames (a partial frame carries over to the next block).
            var i = 0
            while i < cur.count {
                let take = min(activityLen - pendingCount, cur.count - i)
                for j in i..<(i + take) {
                    pendingV += Double(voc[j] * voc[j])
                    pendingO += Double(cur[j] * cur[j])
                }
                pendingCount += take
                i += take
                if pendingCount == activityLen {
                    energyVoc += pendingV
                    energyOrig += pendingO
                    vocalFramesRMS.append((pendingV / Double(activityLen)).squareRoot())
                    pendingV = 0
                    pendingO = 0
                    pendingCount = 0
                }
            }
            frames += cur.count
            // Release what no later block needs: originals before k-1 and accompaniment before block k's start − |lag|.
            if k >= 1 { orig[k - 1] = [] }
            gainCache[k - 2] = nil
            let keepFrom = start - abs(lag) - 1
            if keepFrom > accBase {
                accStream.removeFirst(keepFrom - accBase)
                accBase = keepFrom
            }
            k += 1
        }
        energyVoc += pendingV
        energyOrig += pendingO
        try origWriter?.finish()
        try accWriter?.finish()
        try vocWriter?.finish()
        if frames == 0 { throw AudioError.empty(path: path) }
        let mixRMS = (energyOrig / Double(frames)).squareRoot()
        let threshold = max(1e-4, 0.05 * mixRMS)
        let active = vocalFramesRMS.filter { $0 > threshold }.count
        let sortedGains = usedGains.sorted()
        return SplitResult(analysis: analysis,
                           vocalEnergyShare: energyOrig > 0 ? energyVoc / energyOrig : 0,
                           vocalActivityShare: vocalFramesRMS.isEmpty ? 0 : Double(active) / Double(vocalFramesRMS.count),
                           gainMedian: Stats.upperOrderStatistic(sortedGains, 0.5) ?? gain,
                           frames: frames, sampleRate: rate, truncation: reader.truncation)
    }
}

/// Least-squares gain of the accompaniment in the original, fitted only on time-frequency bins whose
/// level difference is within 1.5 dB of the common level, i.e. where the accompaniment dominates.
/// A time-domain fit is biased whenever the voice sings notes of the accompaniment's chords: their
/// partials coincide and correlate over a block. Bins the voice touches are left out instead.
struct SpectralGainFit {
    static let size = 2048
    let fft = RealFFT(size: SpectralGainFit.size)
    let window = RealFFT.hannWindow(size: SpectralGainFit.size)
    /// The common level from the analysis, as a gain; bins are kept within ±1.5 dB of it.
    let low: Float, high: Float
    var fo = [Float](repeating: 0, count: SpectralGainFit.size), fa = [Float](repeating: 0, count: SpectralGainFit.size)
    var or: [Float] = [], oi: [Float] = [], ar: [Float] = [], ai: [Float] = []

    init(commonGain: Double) {
        let g = Float(max(commonGain, 1e-6))
        low = g * Float(pow(10, -1.5 / 20))
        high = g * Float(pow(10, 1.5 / 20))
    }

    /// Σ Re(O·conj A) and Σ |A|² over the kept bins of every other frame of the block (Hann).
    /// Falls back to the time-domain sums when no bin qualifies (a block of voice alone).
    mutating func sums(_ x: [Float], _ a: [Float]) -> (xa: Double, aa: Double) {
        let n = Self.size
        var xa = 0.0, aa = 0.0
        var t = 0
        while t + n <= x.count {
            for i in 0..<n {
                fo[i] = x[t + i] * window[i]
                fa[i] = a[t + i] * window[i]
            }
            fft.forward(fo, re: &or, im: &oi)
            fft.forward(fa, re: &ar, im: &ai)
            var peak: Float = 0
            for k in 1..<fft.bins { peak = max(peak, ar[k] * ar[k] + ai[k] * ai[k]) }
            let floor = peak * 1e-5  // bins within 50 dB of the frame's loudest accompaniment bin
            for k in 1..<fft.bins {
                let pa = ar[k] * ar[k] + ai[k] * ai[k]
                guard pa > floor, pa > 0 else { continue }
                let po = or[k] * or[k] + oi[k] * oi[k]
                let ratio = (po / pa).squareRoot()
                guard ratio >= low, ratio <= high else { continue }
                xa += Double(or[k] * ar[k] + oi[k] * ai[k])
                aa += Double(pa)
            }
            // Every other frame: half the work, and a gain changes far slower than 2 frames.
            t += 2 * n
        }
        if aa > 0 { return (xa, aa) }
        for i in 0..<x.count { xa += Double(x[i] * a[i]); aa += Double(a[i] * a[i]) }
        // Weak weight: a voice-only block barely informs the gain.
        return (xa * 1e-3, aa * 1e-3)
    }
}
