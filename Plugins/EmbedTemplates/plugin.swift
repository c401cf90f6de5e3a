import Foundation
import PackagePlugin

/// Turns a target's `Templates/` folder (HTML pages, excluded from its sources) into one Swift file
/// of string constants, so the pages live in the binary: `ktv` stays one file that can be copied or
/// shipped without a resource bundle beside it, and the templates stay plain HTML in the repository.
@main
struct EmbedTemplates: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = target.directoryURL.appending(path: "Templates")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let inputs = names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedTemplates.swift")
        return [.buildCommand(displayName: "Embedding \(inputs.count) template(s) into \(target.name)",
                              executable: try context.tool(named: "ktv-embed").url,
                              arguments: [output.path] + inputs.map(\.path),
                              inputFiles: inputs, outputFiles: [output])]
    }
}
