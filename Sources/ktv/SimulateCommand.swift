import ArgumentParser
import KTVSync

/// `ktv replay simulate`: one simulated room, its log written atomically.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate a karaoke room and write its progress log, with truth events.",
        discussion: """
        Built-in scenarios: \(Scenario.builtInNames.joined(separator: ", ")). A JSON scenario file may
        start from one (`"base": "zego"`) and change any field (docs/progress-log.md, "Simulator scenarios").
        Replaying the log checks replay against the truth events it carries.
        """)

    @Option(help: "A built-in scenario name or a JSON scenario file.")
    var scenario: String

    @Option(help: "Random seed (network jitter, callback timing); default: the scenario's.")
    var seed: UInt64?

    @Option(name: .shortAndLong, help: "Where to write the log (atomically; `-` for standard output).")
    var output: String

    func run() throws {
        try refuseOutputsOverInputs([("-o", output)], inputs: [("the scenario file", Scenario.builtInNames.contains(scenario) ? nil : scenario)])
        let room: SimulatedRoom
        do { room = try RoomSimulator.run(scenario: scenario, seed: seed) } catch { throw syncFailure(error) }
        try emit(room.log, to: output)
        let s = room.scenario
        printError("ktv: simulated `\(s.name)` (\(s.rules.rawValue), \(s.devices.count) devices, \(s.roomMs / 1000) s, seed \(s.seed)): \(room.events) events\(output == "-" ? "" : " written to \(output)")")
    }
}
