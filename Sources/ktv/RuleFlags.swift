import ArgumentParser
import KTVScore

/// The rule sets' settings as flags.
struct RuleFlags: ParsableArguments {
    @Option(parsing: .unconditional, help: "ktv rules: auto (estimate; whole octaves forgiven, the rest judged on intervals at a cost), none, or a shift in cents.")
    var keyShift: String = "auto"

    @Flag(help: "ktv rules: count lines outside the recording as 0 instead of leaving them out.")
    var wholeSong = false

    @Option(help: AgoraRulesConfiguration.Spec.level.optionHelp("agora rules: "))
    var level = AgoraRulesConfiguration.Spec.level.defaultValue

    @Option(help: AgoraRulesConfiguration.Spec.compensationOffset.optionHelp("agora rules: "))
    var agoraOffset = AgoraRulesConfiguration.Spec.compensationOffset.defaultValue

    // The old name of --agora-offset (it read as a time, and is a score compensation).
    @Option(name: .customLong("offset"), help: .hidden)
    var oldOffset: Int?

    @Option(help: AgoraRulesConfiguration.Spec.progressIntervalMs.optionHelp("agora rules: "))
    var progressIntervalMs = AgoraRulesConfiguration.Spec.progressIntervalMs.defaultValue

    @Option(help: "ultrastar rules: easy, medium or hard (±2, ±1 or 0 semitones).")
    var difficulty: String = "medium"

    func validate() throws {
        if oldOffset != nil { deprecatedFlag("--offset", "--agora-offset") }
    }

    /// The rule sets' settings (not yet checked: `rules(_:)` checks them).
    func options() throws -> ScoringRuleSet.Options {
        let agora = AgoraRulesConfiguration(level: level, compensationOffset: oldOffset ?? agoraOffset, progressIntervalMs: progressIntervalMs)
        do { return try ScoringRuleSet.Options(keyShift: keyShift, wholeSong: wholeSong, agora: agora, difficulty: difficulty) } catch { throw usageError(error) }
    }

    func rules(_ set: ScoringRuleSet) throws -> any ScoringRules {
        let options = try options()
        do { return try set.rules(options) } catch {
            throw error.parameterError.map { usageError($0, flags: ["compensationOffset": oldOffset == nil ? "--agora-offset" : "--offset"]) } ?? ValidationError("\(error)")
        }
    }
}
