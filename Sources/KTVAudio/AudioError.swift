import Foundation
import KTVCore

/// Why audio could not be read or written. Messages name the file and say what to do.
public enum AudioError: Error, Equatable, CustomStringConvertible, Sendable {
    /// libsndfile could not open the file; `detected` names what the header looks like.
    case cannotOpen(path: String, reason: String, detected: String?)
    /// The path cannot be opened at all (missing, a folder, no permission): an I/O problem, not bad audio.
    case unreadable(path: String, reason: String)
    /// A sample rate the analyses cannot use (a damaged header, or audio far below speech bandwidth).
    case unsupportedSampleRate(path: String, rateHz: Double, range: ClosedRange<Double>)
    /// The file opened but holds no samples.
    case empty(path: String)
    /// A container (through FFmpeg) without the audio stream asked for.
    case noAudioStream(path: String, detail: String)
    /// The command needs another channel count.
    case wrongChannelCount(path: String, found: Int, expected: String, format: String)
    case readFailed(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case resampler(String)
    case invalidArgument(String)
    /// A configuration value outside its declared range.
    case invalidParameter(ParameterError)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason, detected):
            if let detected {
                return "\(path): cannot read audio: the file looks like \(detected), which is not audio ktv decodes (\(reason)); give a recording in WAV, FLAC, OGG, Opus, MP3, AIFF, M4A/MP4, WebM or Matroska"
            }
            return "\(path): cannot read audio: \(reason)"
        case let .unreadable(path, reason):
            return "\(path): cannot read audio: \(reason)"
        case let .unsupportedSampleRate(path, rate, range):
            return "\(path): the sample rate is \(Self.hz(rate)), which ktv cannot analyse: it needs at least \(Self.hz(range.lowerBound)) (and at most \(Self.hz(range.upperBound))); the header is damaged or the audio must be resampled"
        case let .noAudioStream(path, detail):
            return "\(path): no audio to read: \(detail)"
        case let .empty(path):
            return "\(path): the audio has no samples (zero length)"
        case let .wrongChannelCount(path, found, expected, format):
            return "\(path): \(format) with \(found) channel(s); \(expected)"
        case let .readFailed(path, reason):
            return "\(path): reading audio failed: \(reason)"
        case let .cannotWrite(path, reason):
            return "\(path): cannot write \(Self.isAudioName(path) ? "audio" : "the file"): \(reason)"
        case let .resampler(reason):
            return "resampler: \(reason)"
        case let .invalidArgument(reason):
            return reason
        case let .invalidParameter(error):
            return error.description
        }
    }

    /// Whether a path names audio by its ending (`split.json` and a folder do not).
    private static func isAudioName(_ path: String) -> Bool {
        ["wav", "flac", "ogg", "opus", "mp3", "aiff", "aif", "caf", "w64", "rf64"].contains((path as NSString).pathExtension.lowercased())
    }

    private static func hz(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? "\(Int(v)) Hz" : "\(v) Hz"
    }
}

extension AudioError: ExitCoded {
    /// Files that cannot be read or written 74, a bad argument 64, audio that cannot be used 65.
    public var exitCode: Int32 {
        switch self {
        case .unreadable, .cannotWrite: return KTVExitCode.ioError
        case .invalidArgument: return KTVExitCode.usage
        default: return KTVExitCode.dataError
        }
    }
}
