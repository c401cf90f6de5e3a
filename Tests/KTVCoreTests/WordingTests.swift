import KTVCore
import Testing

/// Words in messages: counts with their nouns, the nearest name to a typo, and exit codes.
@Suite struct WordingTests {
    @Test func aCountAgreesWithItsNoun() {
        #expect(counted(0, "take") == "0 takes")
        #expect(counted(1, "take") == "1 take")
        #expect(counted(2, "row") == "2 rows")
        #expect(counted(1, "match", plural: "matches") == "1 match" && counted(3, "match", plural: "matches") == "3 matches")
    }

    @Test func theNearestNameIsTheFewestEditsAway() throws {
        let columns = ["id", "take", "reference", "latency_ms", "key_shift"]
        let typo = try #require(nearest("latncy_ms", among: columns))
        #expect(typo.match == "latency_ms" && typo.distance == 1)
        // Case is ignored; a transposition is two edits.
        #expect(nearest("TAKE", among: columns)?.distance == 0)
        #expect(nearest("tkae", among: columns).map { [$0.match, String($0.distance)] } == ["take", "2"])
        // On a tie, the first listed.
        #expect(nearest("ab", among: ["aa", "bb"])?.match == "aa")
        #expect(nearest("x", among: []) == nil)
    }

    @Test func aFileErrorSaysWhoseFaultItIs() {
        #expect(FileIOError.tooLarge(path: "p", limitBytes: 10).exitCode == KTVExitCode.dataError)
        #expect(FileIOError.cannotRead(path: "p", reason: "no such file").exitCode == KTVExitCode.ioError)
        #expect(FileIOError.cannotWrite(path: "p", reason: "read-only").exitCode == KTVExitCode.ioError)
    }
}
