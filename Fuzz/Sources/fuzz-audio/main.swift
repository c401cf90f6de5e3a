import FuzzTargets
import Foundation

/// KTV_FUZZ_STRICT=1: inputs that hit a known, reported crash are run too (to check a fix, or minimize one).
let known: Set<AudioTarget.KnownIssue> = ProcessInfo.processInfo.environment["KTV_FUZZ_STRICT"] == "1" ? [] : Set(AudioTarget.KnownIssue.allCases)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let failure = AudioTarget.run(Array(UnsafeBufferPointer(start: data, count: size)), tolerating: known) {
        fatalError(failure)
    }
    return 0
}
