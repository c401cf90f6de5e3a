import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ScoreTarget.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
