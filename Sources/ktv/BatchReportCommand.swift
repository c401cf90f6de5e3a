import ArgumentParser
import Foundation
import KTVBatch
import KTVCore
import KTVReport

/// `ktv batch report RESULTS.jsonl`: a results file, every run in it, as a summary, a CSV and a dashboard.
struct BatchReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Summarize a batch's results file: every id (the last line of each counts, resumed runs included).",
        discussion: """
        Prints the summary as JSON unless --summary, --csv or --html says where to write. The CSV has one row per take: \
        \(BatchResults.csvColumns.joined(separator: ", ")). The dashboard (one HTML file, no network) shows the score_100 \
        histogram per rule set, failures by reason, the slowest takes and a table of every take, linked to each take's page \
        when the batch was run with --html-dir.
        """)

    @Argument(help: "The results file ktv batch wrote (JSON Lines); - for standard input.")
    var results: String

    @Option(help: "Write the dashboard here (HTML, atomically).")
    var html: String?

    @Option(help: "Write one row per take here (CSV, atomically).")
    var csv: String?

    @Option(help: "Write the summary here (JSON, atomically).")
    var summary: String?

    func run() throws {
        try refuseOutputsOverInputs([("--html", html), ("--csv", csv), ("--summary", summary)], inputs: [("the results file", results)])
        let read: BatchResults
        do { read = try BatchResults.read(path: results) } catch { throw batchFailure(error) }
        for w in read.warnings { printError("ktv: warning: \(w)") }
        if let html {
            for w in BatchDashboard.pageLinks(read).dropped { printError("ktv: warning: \(w)") }
            try emit(Array(BatchDashboard.render(read, outputPath: html).utf8), to: html)
            if html != "-" { printError("ktv: wrote \(html) (open it in a browser)") }
        }
        if let csv {
            try emit(Array(read.csv().utf8), to: csv)
            if csv != "-" { printError("ktv: wrote \(csv)") }
        }
        if summary != nil || (html == nil && csv == nil) {
            try emit(Array(read.summary().serialized().utf8), to: summary)
        }
    }
}

/// Creates `path` (and its parents) for outputs to go into; exit 74 when it cannot be made.
func makeFolder(_ path: String) throws {
    do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
        printError("ktv: \(path): cannot create the folder: \((error as NSError).localizedDescription)")
        throw ExitCode(KTVExitCode.ioError)
    }
}
