import FuzzTargets
import Foundation

/// KTV_FUZZ_STRICT=1: known, reported issues count as failures too (to check a fix, or minimize one).
let known: Set<RoundTripTarget.KnownIssue> = ProcessInfo.processInfo.environment["KTV_FUZZ_STRICT"] == "1" ? [] : Set(RoundTripTarget.KnownIssue.allCases)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // A broken round trip is a crash, so libFuzzer saves the input.
    if let failure = RoundTripTarget.run(Array(UnsafeBufferPointer(start: data, count: size)), tolerating: known) {
        fatalError(failure)
    }
    return 0
}
