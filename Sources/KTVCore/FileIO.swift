import Foundation

/// Errors from reading and writing files. Messages name the path and say what to check.
public enum FileIOError: Error, Equatable, CustomStringConvertible, Sendable {
    case cannotRead(path: String, reason: String)
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotRead(path, reason):
            return "\(path): cannot read: \(reason)"
        case let .cannotWrite(path, reason):
            return "\(path): cannot write: \(reason) (check that the folder exists and is writable)"
        }
    }
}

/// Whole-file reads and atomic writes.
///
/// Writes go to a temporary file in the destination's folder and are renamed into place, so a
/// reader (or a crash) never sees a partly written output.
public enum FileIO {
    /// Reads a whole file. `-` reads standard input.
    public static func read(_ path: String) throws -> [UInt8] {
        if path == "-" {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            return [UInt8](data)
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw FileIOError.cannotRead(path: path, reason: "no such file")
        }
        if isDir.boolValue {
            throw FileIOError.cannotRead(path: path, reason: "is a folder, not a file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FileIOError.cannotRead(path: path, reason: "permission denied or unreadable")
        }
        return [UInt8](data)
    }

    /// Writes `bytes` to `path` atomically: temporary file in the same folder, then rename.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent()
        let tmp = dir.appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try Data(bytes).write(to: tmp, options: [])
        } catch {
            try? FileManager.default.removeItem(at: tmp)
            throw FileIOError.cannotWrite(path: path, reason: Self.reason(error))
        }
        if rename(tmp.path, url.path) != 0 {
            let err = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: tmp)
            throw FileIOError.cannotWrite(path: path, reason: err)
        }
    }

    private static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError,
           underlying.domain == NSPOSIXErrorDomain,
           let code = POSIXErrorCode(rawValue: Int32(underlying.code)) {
            return String(cString: strerror(code.rawValue))
        }
        return ns.localizedDescription
    }
}
