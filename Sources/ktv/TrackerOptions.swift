import ArgumentParser
import Foundation
import KTVCore
import KTVPitch

/// The pitch tracker's settings as flags, for every command that tracks a recording.
struct TrackerOptions: ParsableArguments {
    @Option(help: PitchConfiguration.Spec.hopMs.optionHelp)
    var hopMs = PitchConfiguration.Spec.hopMs.defaultValue

    @Option(help: PitchConfiguration.Spec.minHz.optionHelp)
    var minHz = PitchConfiguration.Spec.minHz.defaultValue

    @Option(help: PitchConfiguration.Spec.maxHz.optionHelp)
    var maxHz = PitchConfiguration.Spec.maxHz.defaultValue

    @Option(help: PitchConfiguration.Spec.analysisRateHz.optionHelp)
    var analysisRate = PitchConfiguration.Spec.analysisRateHz.defaultValue

    @Option(help: PitchConfiguration.Spec.windowMs.flagHelp)
    var windowMs: Double?

    @Option(help: PitchConfiguration.Spec.threads.optionHelp("", " Default: one per core (in ktv batch, 1: its workers fill the cores)."))
    var threads: Int?

    /// Library parameters whose flag is not their kebab-case name.
    static let flags = ["analysisRateHz": "--analysis-rate"]

    /// The checked configuration; a value out of range is a usage error naming its flag.
    func configuration() throws -> PitchConfiguration {
        var c = PitchConfiguration()
        c.hopMs = hopMs
        c.minHz = minHz
        c.maxHz = maxHz
        c.analysisRateHz = analysisRate
        c.windowMs = windowMs
        // 0 was once documented as "one per core"; it still means the default.
        c.threads = threads.flatMap { $0 == 0 ? nil : $0 } ?? ProcessInfo.processInfo.activeProcessorCount
        do { return try c.validated() } catch {
            throw error.parameterError.map { usageError($0, flags: Self.flags) } ?? ValidationError("\(error)")
        }
    }

    /// `--channel`'s value as a selection.
    static func channel(_ text: String) throws -> ChannelSelection {
        do { return try ChannelSelection(parsing: text) } catch { throw usageError(error) }
    }
}
