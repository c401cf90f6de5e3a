import Foundation
import Testing

/// Every input the fuzzers saved (fixtures/fuzz/<harness>/) through the code its harness runs
/// (FuzzTargets/, the fuzz package's own files): each must run without a crash, and where the
/// harness checks a property (round trip, audio) the property must hold. A thrown error inside is
/// fine, as in the harnesses.
///
/// Round-trip files named `known-<issue>[+<issue>…]-…` hit an issue that was found and reported but
/// is not fixed yet: they are run strictly and must still fail (a known issue, so the test passes
/// while it does, and fails once the issue is fixed: then drop the case from
/// `RoundTripTarget.KnownIssue` and the `known-` prefix).
@Suite struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../fixtures/fuzz").standardizedFileURL

    struct Input: CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var description: String { name }
        /// `known-<issue>[+<issue>…]-<hash>` → the issues' names; empty for other files.
        var knownIssues: [String] {
            guard name.hasPrefix("known-") else { return [] }
            let rest = name.dropFirst("known-".count)
            let issues = rest.lastIndex(of: "-").map { rest[..<$0] } ?? rest
            return issues.split(separator: "+").map(String.init)
        }
    }

    static func inputs(_ harness: String) throws -> [Input] {
        let dir = root.appendingPathComponent(harness)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return [] }
        return try names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map { name in
            Input(name: name, bytes: [UInt8](try Data(contentsOf: dir.appendingPathComponent(name))))
        }
    }

    @Test func fixturesFolderIsThere() {
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("README.md").path))
    }

    @Test func lyrics() throws {
        for input in try Self.inputs("lyrics") { LyricsTarget.run(input.bytes) }
    }

    @Test func roundTrip() throws {
        for input in try Self.inputs("roundtrip") {
            if !input.knownIssues.isEmpty {
                let known = input.knownIssues.compactMap(RoundTripTarget.KnownIssue.init(rawValue:))
                #expect(known.count == input.knownIssues.count, "\(input): not every issue named is a RoundTripTarget.KnownIssue")
                withKnownIssue("\(input): \(input.knownIssues.joined(separator: ", "))") {
                    #expect(RoundTripTarget.run(input.bytes, tolerating: []) == nil)
                }
                // Tolerating the issues named, everything else about the input holds.
                #expect(RoundTripTarget.run(input.bytes, tolerating: Set(known)) == nil, "\(input)")
            } else {
                let failure = RoundTripTarget.run(input.bytes, tolerating: [])
                #expect(failure == nil, "\(input): \(failure ?? "")")
            }
        }
    }

    @Test func replay() throws {
        for input in try Self.inputs("replay") { ReplayTarget.run(input.bytes) }
    }

    @Test func pitchTrack() throws {
        for input in try Self.inputs("pitchtrack") { PitchTrackTarget.run(input.bytes) }
    }

    @Test func reference() throws {
        for input in try Self.inputs("reference") {
            let failure = ReferenceTarget.run(input.bytes)
            #expect(failure == nil, "\(input): \(failure ?? "")")
        }
    }

    @Test func score() throws {
        for input in try Self.inputs("score") { ScoreTarget.run(input.bytes) }
    }

    @Test func audio() throws {
        for input in try Self.inputs("audio") {
            let failure = AudioTarget.run(input.bytes)
            #expect(failure == nil, "\(input): \(failure ?? "")")
        }
    }
}
