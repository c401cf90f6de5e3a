import ArgumentParser
import Foundation
import KTVCore
import KTVPitch

/// The pitch tracker's settings as flags, for every command that tracks a recording.
struct TrackerOptions: ParsableArguments {
    @Option(help: ArgumentHelp(PitchConfiguration.Spec.hopMs.help))
    var hopMs = PitchConfiguration.Spec.hopMs.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.minHz.help))
    var minHz = PitchConfiguration.Spec.minHz.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.maxHz.help))
    var maxHz = PitchConfiguration.Spec.maxHz.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.analysisRateHz.help))
    var analysisRate = PitchConfiguration.Spec.analysisRateHz.defaultValue

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.windowMs.help))
    var windowMs: Double?

    @Option(help: ArgumentHelp(PitchConfiguration.Spec.threads.help + " 0 = one per core."))
    var threads: Int = 0

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
        c.threads = threads == 0 ? ProcessInfo.processInfo.activeProcessorCount : threads
        do { return try c.validated() } catch {
            throw error.parameterError.map { usageError($0, flags: Self.flags) } ?? ValidationError("\(error)")
        }
    }

    /// `--channel`'s value as a selection.
    static func channel(_ text: String) throws -> ChannelSelection {
        do { return try ChannelSelection(parsing: text) } catch { throw usageError(error) }
    }
}
