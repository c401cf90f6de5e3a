import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // A broken round trip is a crash, so libFuzzer saves the input.
    if let failure = RoundTripTarget.run(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError(failure)
    }
    return 0
}
