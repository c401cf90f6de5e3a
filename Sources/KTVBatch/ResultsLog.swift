import Foundation
import KTVCore

/// The results file: one JSON line per take, appended in completion order.
///
/// Each line goes out in one `write(2)` of the whole line on a descriptor opened with `O_APPEND`,
/// nothing buffered in the process, so a crash or `kill -9` loses at most the takes in flight and
/// never half a line. A line can still be torn by the machine going down or a full disk; continuing
/// (`resume: true`) finds such a last line (no newline at its end), cuts it off and says so. Lines
/// from before that are read one at a time (the file is never in memory whole), and the ids with
/// `"status": "ok"` are the takes not to score again; so are those written as `reason: crash` (a take
/// that ended two workers would end a third) unless `retryCrashed`.
public final class ResultsLog: @unchecked Sendable {
    /// What messages call the file.
    public let name: String
    /// Ids not to score again (continuing only): scored with `status: ok`, or crashed (unless retried).
    public private(set) var completedIds: Set<String> = []
    /// What continuing the file found and did (a torn line dropped, a line that is not JSON).
    public private(set) var warnings: [String] = []

    private let fd: Int32
    private let ownsDescriptor: Bool
    private let lock = NSLock()

    /// Standard output (`path` nil or `-`), or a file: created when missing; when it holds lines
    /// already, continued with `resume`, else refused (`.resultsExist`), so an earlier run's
    /// results are never overwritten or mixed in by accident.
    public init(path: String?, resume: Bool, retryCrashed: Bool = false) throws(BatchError) {
        guard let path, path != "-" else {
            if resume { throw .invalidParameter(name: "resume", value: "standard output", allowed: "a results file to continue") }
            name = "<stdout>"
            fd = 1
            ownsDescriptor = false
            return
        }
        name = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw .io(.cannotWrite(path: path, reason: FileIO.writeReason(errno))) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { close(fd); throw .io(.cannotRead(path: path, reason: FileIO.readReason(errno))) }
        let isRegular = (st.st_mode & S_IFMT) == S_IFREG
        if isRegular && st.st_size > 0 {
            guard resume else { close(fd); throw .resultsExist(path: path, bytes: Int(st.st_size)) }
            do { (completedIds, warnings) = try Self.scanAndRepair(fd: fd, name: path, retryCrashed: retryCrashed) } catch { close(fd); throw error }
        } else if resume && !isRegular {
            close(fd)
            throw .badResults(path: path, detail: "not a regular file; only a results file can be continued")
        }
        // From here on every write goes to the end, whatever the offset.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND)
        self.fd = fd
        ownsDescriptor = true
    }

    deinit { if ownsDescriptor { close(fd) } }

    /// Appends one line (the value serialized on one line, then `\n`) with a single write.
    public func append(_ value: JSONValue) throws(FileIOError) {
        var bytes = value.serializedBytes(pretty: false)
        bytes.append(0x0A)
        lock.lock()
        defer { lock.unlock() }
        try FileIO.writeAll(fd: fd, bytes, path: name)
    }

    /// Waits for a line being written and keeps every later one out: for a process about to exit
    /// at once (a second Ctrl-C), so no line is torn. Never returns the lock.
    public func closeForExit() {
        lock.lock()
        if ownsDescriptor { fsync(fd) }
    }

    /// Flushes the file to the disk (at the end of a run: a finished batch survives a power cut).
    public func sync() { if ownsDescriptor { fsync(fd) } }

    /// Reads every complete line for the ids already done and cuts off a torn last line.
    private static func scanAndRepair(fd: Int32, name: String, retryCrashed: Bool) throws(BatchError) -> (Set<String>, [String]) {
        var completedIds: Set<String> = [], warnings: [String] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var pending: [UInt8] = []
        var offset = 0          // bytes read so far
        var lastLineEnd = 0     // offset just past the last newline
        var line = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(.cannotRead(path: name, reason: FileIO.readReason(errno)))
            }
            if n == 0 { break }
            var start = 0
            for k in 0..<n where chunk[k] == UInt8(ascii: "\n") {
                pending.append(contentsOf: chunk[start..<k])
                line += 1
                take(line: pending, number: line, name: name, retryCrashed: retryCrashed, ids: &completedIds, warnings: &warnings)
                pending.removeAll(keepingCapacity: true)
                start = k + 1
                lastLineEnd = offset + k + 1
            }
            pending.append(contentsOf: chunk[start..<n])
            offset += n
        }
        if lastLineEnd < offset {
            warnings.append("\(name): line \(line + 1) was cut off (\(offset - lastLineEnd) bytes without an end, from a run that stopped mid-write); dropped it, and its take is scored again")
            guard ftruncate(fd, off_t(lastLineEnd)) == 0 else {
                throw .io(.cannotWrite(path: name, reason: "cannot drop the torn last line: \(FileIO.writeReason(errno))"))
            }
        }
        return (completedIds, warnings)
    }

    private static func take(line bytes: [UInt8], number: Int, name: String, retryCrashed: Bool,
                             ids completedIds: inout Set<String>, warnings: inout [String]) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { return }
        guard let value = try? JSONReader.parse(bytes), case .object = value else {
            warnings.append("\(name): line \(number) is not a JSON object; ignored (its take, if any, is scored again)")
            return
        }
        let done = value["status"]?.string == "ok" || (!retryCrashed && value["reason"]?.string == BatchFailure.Reason.crash.rawValue)
        if done, let id = value["id"]?.string { completedIds.insert(id) }
    }
}
