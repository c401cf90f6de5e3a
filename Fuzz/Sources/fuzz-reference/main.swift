import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if let failure = ReferenceTarget.run(Array(UnsafeBufferPointer(start: data, count: size))) {
        fatalError(failure)
    }
    return 0
}
