import KTVAudio
import KTVCore
import KTVPitch
import KTVScore
import KTVSync

/// Why one take failed: a short reason the summary counts by, and a message naming the file (and
/// the line or time when known) and what is wrong.
public struct BatchFailure: Error, Sendable, Equatable {
    public enum Reason: String, Sendable, CaseIterable, Comparable {
        /// The row's own values: a missing take or reference, a rule set that does not exist, a repeated id.
        case row
        /// A file the row names does not exist.
        case missing
        /// The reference cannot be read as a melody.
        case reference
        /// The take (or its accompaniment) is audio that cannot be decoded or used.
        case audio
        /// The take cannot be read as a pitch track, or holds nothing to score.
        case take
        /// The progress log cannot be read, or does not place the take.
        case progressLog = "progress_log"
        /// A file exists but cannot be read (permissions, a folder, a read error).
        case io
        /// Anything else while scoring.
        case scoring
        /// Scoring the take ended the worker process twice (a trap, a signal, the OOM killer).
        case crash

        public static func < (a: Reason, b: Reason) -> Bool { a.rawValue < b.rawValue }
    }

    /// The stage a failure happened in, which decides the reason when the error alone does not.
    enum Stage { case reference, take }

    public var reason: Reason
    public var message: String

    public init(reason: Reason, message: String) {
        self.reason = reason
        self.message = message
    }

    /// A slot as a manifest names it: its column.
    static func column(_ slot: InputSlot) -> String {
        switch slot {
        case .take: return "in the take column"
        case .reference: return "in the reference column"
        case .lyrics: return "in the lyrics column"
        case .referenceAudio: return "as a reference recording (a batch row takes reference files; score against a recording one take at a time)"
        case .manifest: return "as the manifest"
        }
    }

    /// A library parameter a row's column sets, as the manifest names it (`pitchIntervalMs` → the
    /// pitch_interval_ms column).
    static func columnText(_ text: String) -> String {
        respellingParameters(in: text) { name in
            ManifestColumn.allCases.first { String(describing: $0) == name }.map { "the \($0.rawValue) column" }
        }
    }

    init(_ error: Error, stage: Stage) {
        message = Self.columnText("\(error)")
        switch error {
        case let e as BatchFailure: self = e
        case let e as ScoreError:
            switch e {
            case .badReference: reason = .reference
            case .badTake: reason = stage == .reference ? .reference : .take
            case .invalidParameter: reason = .row
            case let .misplaced(m):
                reason = m.slot == .take ? .take : .reference
                message = m.message(naming: Self.column)
            }
        case is AudioError: reason = stage == .reference ? .reference : .audio
        case is PitchError: reason = stage == .reference ? .reference : .take
        case is SyncError: reason = .progressLog
        case let e as FileIOError:
            // Over its size limit the file is unusable (bad data), not unreadable.
            if case .tooLarge = e { reason = stage == .reference ? .reference : .take } else { reason = .io }
        default: reason = stage == .reference ? .reference : .scoring
        }
    }
}
