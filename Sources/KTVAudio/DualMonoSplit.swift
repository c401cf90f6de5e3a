import Foundation
import KTVCore

// Splitting dual-mono karaoke tracks.
//
// A KTV track often carries the original song (voice + music) in one channel and the accompaniment
// alone in the other; Volcano's docs put the original left, files in the wild have it either way.
// With o = original, a = accompaniment channel: o(t) = g·a(t − lag) + v(t).
//
// 1. Lag: the peak of the cross-correlation of the two channels (computed by FFT) over a few
//    analysis windows spread through the file, within ±maxLagSamples.
// 2. Layout: after alignment, the level difference d = 20·log10(|L|/|R|) of each time-frequency bin
//    (100 Hz-5 kHz, where the voice is) sits at 20·log10(g) wherever the voice is absent, and above
//    it wherever the voice adds energy, never below. The original is the channel toward which the
//    distribution of d is skewed. (Comparing least-squares residuals cannot decide: projecting either
//    channel on the other leaves the same normalized residual.) A sharp common mode means the
//    channels share the accompaniment; without one they are unrelated (ordinary stereo, or a
//    voice-only channel), which is reported as not dual-mono.
// 3. Vocal estimate: v = o − g(t)·a(t − lag), with g estimated by least squares per block and
//    interpolated linearly between block centres so slow gain changes are followed without steps.
//
// Files: this one holds the types and the entry points; `DualMonoLayout.swift` steps 1-2 (lag and
// layout, with their thresholds named); `DualMonoSeparator.swift` step 3 (the streaming pass).

/// Which channel holds the original (voice + music).
public enum SplitLayout: Sendable, Equatable {
    /// Decide from the signals.
    case auto
    /// Explicit 0-based channel indices.
    case channels(original: Int, accompaniment: Int)

    public static let leftOriginal = SplitLayout.channels(original: 0, accompaniment: 1)
    public static let rightOriginal = SplitLayout.channels(original: 1, accompaniment: 0)

    /// `auto`, `left` or `right` (the original's side), or `O,A`: 1-based channel numbers of the
    /// original and the accompaniment (beyond two channels). `left-original` and `right-original`
    /// are the old spellings of `left` and `right`.
    public init(parsing text: String) throws(ParameterError) {
        switch text {
        case "auto": self = .auto
        case "left", "left-original": self = .leftOriginal
        case "right", "right-original": self = .rightOriginal
        default:
            let parts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let o = parts[0], let a = parts[1], o >= 1, a >= 1, o != a else {
                throw ParameterError(name: "layout", value: quoted(text),
                                     allowed: "auto, left, right (the original's side), or O,A with two different 1-based channel numbers")
            }
            self = .channels(original: o - 1, accompaniment: a - 1)
        }
    }
}

/// Settings of `DualMonoSplitter`. Every number is declared once in `Spec` (unit, range, default).
public struct SplitConfiguration: Sendable {
    public enum Spec {
        public static let maxLagSamples = Parameter<Int>("maxLagSamples", unit: "samples", range: 0...96000, default: 4096,
            "Largest lag searched between the two channels.")
        public static let gainBlockS = Parameter<Double>("gainBlockS", unit: "s", range: 0.05...30, default: 1,
            "Length of the blocks the accompaniment gain is fitted on; gains are interpolated between block centres.")
        public static let gainContextBlocks = Parameter<Int>("gainContextBlocks", unit: "blocks", range: 0...10, default: 2,
            "Blocks on each side included in a block's gain fit.")
        public static let analysisWindows = Parameter<Int>("analysisWindows", unit: "windows", range: 1...32, default: 6,
            "Windows, spread over the file, that lag and layout are decided on.")
        public static let analysisWindowS = Parameter<Double>("analysisWindowS", unit: "s", range: 1...120, default: 8,
            "Length of each analysis window.")
        public static let minConfidence = Parameter<Double>("minConfidence", range: 0...1, default: 0.3,
            "Below this layout confidence, `auto` reports the track as not dual-mono.")
        public static let all: [ParameterInfo] = [maxLagSamples.info, gainBlockS.info, gainContextBlocks.info,
                                                  analysisWindows.info, analysisWindowS.info, minConfidence.info]
    }

    public var layout: SplitLayout = .auto
    public var maxLagSamples = Spec.maxLagSamples.defaultValue
    public var gainBlockS = Spec.gainBlockS.defaultValue
    public var gainContextBlocks = Spec.gainContextBlocks.defaultValue
    public var analysisWindows = Spec.analysisWindows.defaultValue
    public var analysisWindowS = Spec.analysisWindowS.defaultValue
    public var minConfidence = Spec.minConfidence.defaultValue

    public init() {}

    public func validated() throws(AudioError) -> SplitConfiguration {
        do {
            try Spec.maxLagSamples.check(maxLagSamples)
            try Spec.gainBlockS.check(gainBlockS)
            try Spec.gainContextBlocks.check(gainContextBlocks)
            try Spec.analysisWindows.check(analysisWindows)
            try Spec.analysisWindowS.check(analysisWindowS)
            try Spec.minConfidence.check(minConfidence)
        } catch { throw .invalidParameter(error) }
        if case let .channels(o, a) = layout, o < 0 || a < 0 || o == a {
            throw .invalidParameter(ParameterError(name: "layout", value: "channels \(o), \(a)", allowed: "two different channel indices ≥ 0"))
        }
        return self
    }
}

/// What the analysis found.
public struct SplitAnalysis: Sendable, Equatable {
    public var dualMono: Bool
    /// 0-based channel of the original; nil when not dual-mono.
    public var originalChannel: Int?
    public var accompanimentChannel: Int?
    /// 0…1: how sure the layout decision is (1 when the layout was given).
    public var confidence: Double
    /// Accompaniment position in the original minus its position in its own channel, in samples.
    public var lagSamples: Int
    /// Level of the accompaniment inside the original relative to its own channel (linear).
    public var gain: Double
    /// Peak normalized cross-correlation of the two channels (0…1).
    public var correlation: Double
    /// Share of time-frequency bins at the common level (the accompaniment alone).
    public var commonShare: Double
    /// Shares of bins well above / below the common level (+6 dB / −6 dB): the voice's side.
    public var aboveShare: Double
    public var belowShare: Double
    /// Why, in words.
    public var reason: String
}

/// The outcome of a split.
public struct SplitResult: Sendable {
    public var analysis: SplitAnalysis
    /// Energy of the vocal estimate over energy of the original channel.
    public var vocalEnergyShare: Double
    /// Share of 50 ms frames in which the vocal estimate is active (above −26 dB of the mix level).
    public var vocalActivityShare: Double
    /// Median of the per-block gains actually used.
    public var gainMedian: Double
    public var frames: Int
    public var sampleRate: Double
    /// Where the input stopped decoding early (a truncated or damaged file); the outputs end there.
    public var truncation: AudioTruncation?
}

/// Where the split writes (nil: not written). Every output, the report included, appears together
/// or not at all: each is written under a temporary name and all are renamed once all succeeded.
public struct SplitOutputs: Sendable {
    public var original: String?
    public var accompaniment: String?
    public var vocals: String?
    public var format: AudioFileFormat?
    /// A folder to create (with its parents) once the input has been read and analysed; removed again
    /// when the split fails and it was created for this split.
    public var folder: String?
    /// A report written with the audio from the result (also when the track is not split).
    public var report: SplitReportOutput?
    /// Receives the vocal estimate block by block, in order (at the input's rate), so a caller can
    /// analyse it as it is made instead of reading a written file back.
    public var vocalBlocks: (@Sendable ([Float]) throws -> Void)?

    public init(original: String? = nil, accompaniment: String? = nil, vocals: String? = nil, format: AudioFileFormat? = nil,
                folder: String? = nil, report: SplitReportOutput? = nil) {
        self.original = original
        self.accompaniment = accompaniment
        self.vocals = vocals
        self.format = format
        self.folder = folder
        self.report = report
    }
}

/// A file rendered from the split's result and written in the same all-or-nothing set as the audio.
public struct SplitReportOutput: Sendable {
    public var path: String
    public var render: @Sendable (SplitResult) -> [UInt8]

    public init(path: String, render: @escaping @Sendable (SplitResult) -> [UInt8]) {
        self.path = path
        self.render = render
    }
}

public enum DualMonoSplitter {
    /// Decides lag, layout and gain from analysis windows of the file.
    public static func analyze(path: String, stream: Int? = nil, configuration: SplitConfiguration) throws(AudioError) -> SplitAnalysis {
        try analyze(reader: AudioReader(path: path, stream: stream), configuration: configuration)
    }

    /// Decides lag, layout and gain from analysis windows of an open reader (a file or bytes in memory).
    public static func analyze(reader: AudioReader, configuration: SplitConfiguration) throws(AudioError) -> SplitAnalysis {
        let config = try configuration.validated()
        let info = reader.info
        try checkChannels(info, path: reader.path, layout: config.layout)
        let (a, b) = pair(config.layout, channels: info.channels)
        let windows = try analysisWindows(reader, config: config, channels: (a, b))
        return analyze(windows: windows, sampleRate: info.sampleRate, config: config, pair: (a, b))
    }

    /// Analysis and the streaming split, writing the requested outputs (all of them, or none).
    /// `stream`: the audio stream of a container (from 1; nil: the first).
    public static func split(path: String, stream: Int? = nil, configuration: SplitConfiguration, outputs: SplitOutputs) throws(AudioError) -> SplitResult {
        let config = try configuration.validated()
        let analysisReader = try AudioReader(path: path, stream: stream)
        let analysis = try analyze(reader: analysisReader, configuration: config)
        let folder = try FolderCreation(outputs.folder)
        let set = AtomicOutputSet()
        var result = SplitResult(analysis: analysis, vocalEnergyShare: 0, vocalActivityShare: 0, gainMedian: 0, frames: 0,
                                 sampleRate: 0, truncation: analysisReader.truncation)
        do {
            if analysis.dualMono, let o = analysis.originalChannel, let c = analysis.accompanimentChannel {
                result = try DualMonoSeparator(reader: AudioReader(path: path, stream: stream), original: o, accompaniment: c, lag: analysis.lagSamples,
                                                gain: analysis.gain, config: config).run(outputs: outputs, into: set, analysis: analysis)
                result.truncation = result.truncation ?? analysisReader.truncation
            }
            if let report = outputs.report {
                let output = try set.add(report.path)
                try FileIO.writeAtomically(report.render(result), to: output.temporaryPath)
            }
            try set.commit()
        } catch {
            set.discard()
            folder.undo()
            switch error {
            case let e as AudioError: throw e
            case let e as FileIOError: throw .cannotWrite(path: Self.pathOf(e) ?? outputs.folder ?? path, reason: e.reason)
            default: throw .cannotWrite(path: outputs.folder ?? path, reason: "\(error)")
            }
        }
        return result
    }

    private static func pathOf(_ e: FileIOError) -> String? {
        switch e {
        case let .cannotRead(p, _), let .cannotWrite(p, _), let .tooLarge(p, _): return p
        case .brokenPipe: return nil
        }
    }

    static func checkChannels(_ info: AudioInfo, path: String, layout: SplitLayout) throws(AudioError) {
        switch layout {
        case .auto:
            guard info.channels == 2 else {
                throw .wrongChannelCount(path: path, found: info.channels, expected: info.channels == 1
                    ? "a dual-mono KTV track has two channels (original and accompaniment); a mono file cannot be split"
                    : "auto layout needs exactly two channels; name the original and accompaniment channels with --layout O,A",
                    format: info.formatName)
            }
        case let .channels(o, a):
            guard info.channels >= 2, o != a, (0..<info.channels).contains(o), (0..<info.channels).contains(a) else {
                throw .wrongChannelCount(path: path, found: info.channels,
                                         expected: "the layout names channels \(o + 1) and \(a + 1), which this file does not have as two different channels",
                                         format: info.formatName)
            }
        }
    }

    private static func pair(_ layout: SplitLayout, channels: Int) -> (Int, Int) {
        if case let .channels(o, a) = layout { return (o, a) }
        return (0, 1)
    }
}

/// A folder created for a set of outputs, and removed again (only what was created, only if empty)
/// when the outputs are abandoned.
struct FolderCreation {
    /// Folders created, deepest last.
    private var created: [String] = []

    init(_ folder: String?) throws(AudioError) {
        guard let folder else { return }
        var missing: [String] = []
        var p = (folder as NSString).standardizingPath
        var isDir: ObjCBool = false
        while !p.isEmpty, p != "/", !FileManager.default.fileExists(atPath: p, isDirectory: &isDir) {
            missing.append(p)
            p = (p as NSString).deletingLastPathComponent
        }
        if FileManager.default.fileExists(atPath: folder, isDirectory: &isDir), !isDir.boolValue {
            throw .cannotWrite(path: folder, reason: "exists and is not a folder")
        }
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw .cannotWrite(path: folder, reason: "cannot create the folder: \((error as NSError).localizedDescription)")
        }
        created = missing.reversed()
    }

    func undo() {
        for dir in created.reversed() { rmdir(dir) }
    }
}
