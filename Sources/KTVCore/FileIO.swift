import Foundation

/// Errors from reading and writing files. Messages name the path and say what to check.
public enum FileIOError: Error, Equatable, CustomStringConvertible, Sendable {
    case cannotRead(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    /// The input is larger than the limit the caller set (`limitBytes`).
    case tooLarge(path: String, limitBytes: Int)
    /// Standard output (or another stream) was closed by its reader: not an error to report.
    case brokenPipe

    public var description: String {
        switch self {
        case let .cannotRead(path, reason):
            return "\(path): cannot read: \(reason)"
        case let .cannotWrite(path, reason):
            return "\(path): cannot write: \(reason) (check that the folder exists and is writable)"
        case let .tooLarge(path, limit):
            return "\(path): larger than the \(FileIO.describeSize(limit)) limit for this kind of input"
        case .brokenPipe:
            return "the reader closed the pipe"
        }
    }

    /// The reason alone, without the path (for errors of other modules that name the path themselves).
    public var reason: String {
        switch self {
        case let .cannotRead(_, reason), let .cannotWrite(_, reason): return reason
        case let .tooLarge(_, limit): return "larger than the \(FileIO.describeSize(limit)) limit"
        case .brokenPipe: return "the reader closed the pipe"
        }
    }
}

/// Whole-file reads, bounded; writes that never leave a partial output and never replace a device.
///
/// Writes to a regular file (or a new one) go to a temporary file in the destination's folder and
/// are renamed into place, so a reader (or a crash) never sees a partly written output. A symbolic
/// link is followed and its target replaced (the link stays). A character or block device or a FIFO
/// (`/dev/null`, `/dev/stdout`, a named pipe) is written straight into: renaming over it would
/// replace the device with a regular file.
public enum FileIO {
    /// Reads a whole file. `-` reads standard input. Fails with `.tooLarge` past `maxBytes` without
    /// reading further, so a huge or endless input cannot exhaust memory. `maxStreamBytes`, when
    /// given, is the limit instead for an input that is no regular file (standard input, a pipe, a
    /// device such as `/dev/zero`), whose size is unknown until its end.
    public static func read(_ path: String, maxBytes: Int = Int.max, maxStreamBytes: Int? = nil) throws(FileIOError) -> [UInt8] {
        let fd: Int32
        if path == "-" {
            fd = 0
        } else {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw .cannotRead(path: path, reason: readReason(errno)) }
        }
        defer { if fd != 0 { close(fd) } }
        var st = stat()
        var maxBytes = maxBytes
        if fstat(fd, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotRead(path: path, reason: "is a folder, not a file") }
            if (st.st_mode & S_IFMT) == S_IFREG && Int(st.st_size) > maxBytes {
                throw .tooLarge(path: path, limitBytes: maxBytes)
            }
        }
        if (st.st_mode & S_IFMT) != S_IFREG, let maxStreamBytes { maxBytes = maxStreamBytes }
        var out: [UInt8] = []
        if (st.st_mode & S_IFMT) == S_IFREG {
            // A regular file is read straight into an array of its size (one byte more, to see it
            // has not grown): no zeroed 64 KB chunk and no copy for each of a folder's small files.
            let size = min(Int(st.st_size), maxBytes)
            out = try fill(fd, capacity: size + 1, path: path)
            if out.count <= size { return out }
            if out.count > maxBytes { throw .tooLarge(path: path, limitBytes: maxBytes) }
            // It grew while being read: the rest as a stream.
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, reason: readReason(errno))
            }
            if n == 0 { break }
            if out.count + n > maxBytes { throw .tooLarge(path: path, limitBytes: maxBytes) }
            out.append(contentsOf: chunk[0..<n])
        }
        return out
    }

    /// Up to `capacity` bytes read from `fd` into an array made for them (uninitialised: no zeroing,
    /// no copy), fewer at the end of the file.
    private static func fill(_ fd: Int32, capacity: Int, path: String) throws(FileIOError) -> [UInt8] {
        var failure: Int32 = 0
        let out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = 0
            while count < capacity {
                let n = Foundation.read(fd, buffer.baseAddress! + count, capacity - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }
                count += n
            }
        }
        if failure != 0 { throw .cannotRead(path: path, reason: readReason(failure)) }
        return out
    }

    /// The first `count` bytes of a file (fewer when it is shorter), to tell its format. Only a
    /// regular file (or a link to one): the bytes a FIFO or a device gives are gone once read, so the
    /// reader that follows the sniff would not see them, and opening a FIFO waits for a writer.
    public static func readPrefix(_ path: String, count: Int) throws(FileIOError) -> [UInt8] {
        if let kind = specialFileKind(path) { throw .cannotRead(path: path, reason: notRegularReason(kind)) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotRead(path: path, reason: readReason(errno)) }
        defer { close(fd) }
        var st = stat()
        if fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotRead(path: path, reason: "is a folder, not a file") }
        // No more room than the file has, uninitialised: a megabyte zeroed for each take's sniff
        // was a third of a batch's page faults.
        let room = (st.st_mode & S_IFMT) == S_IFREG ? min(max(0, count), Int(st.st_size)) : max(0, count)
        return try fill(fd, capacity: room, path: path)
    }

    /// Writes `bytes` to `path` without ever leaving a partial file (see the type's notes).
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(FileIOError) {
        do { try write(to: path) { put in try put(bytes) } } catch let error as FileIOError { throw error } catch {
            throw .cannotWrite(path: path, reason: "\(error)")
        }
    }

    /// Writes output made in pieces (`produce` calls `put` with each) to `path`, as `writeAtomically`
    /// does: a device or FIFO gets each piece as it comes; a regular file is written under a temporary
    /// name and put in place at the end, or not at all when `produce` throws. The whole output is
    /// never in memory. Rethrows `produce`'s errors; write failures are `FileIOError`.
    public static func write(to path: String, _ produce: (_ put: ([UInt8]) throws -> Void) throws -> Void) throws {
        let target = try OutputTarget(path)
        if target.isSpecial {
            let (fd, owned) = try target.openStraight()
            defer { if owned { close(fd) } }
            try produce { try writeAll(fd: fd, $0, path: path) }
            return
        }
        let output = try AtomicOutput(target)
        let fd = open(output.temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw FileIOError.cannotWrite(path: path, reason: writeReason(errno)) }
        do { try produce { try writeAll(fd: fd, $0, path: path) } } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw FileIOError.cannotWrite(path: path, reason: writeReason(errno)) }
        try output.commit()
    }

    /// Writes every byte to a file descriptor, retrying short writes and interrupts.
    /// A reader that went away (`EPIPE`) is `.brokenPipe`, so callers can stop quietly.
    public static func writeAll(fd: Int32, _ bytes: [UInt8], path: String) throws(FileIOError) {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == EPIPE { throw .brokenPipe }
                throw .cannotWrite(path: path, reason: writeReason(errno))
            }
            done += n
        }
    }

    /// What `path` is when it is neither a regular file nor a folder (links followed): `a FIFO
    /// (named pipe)`, `a device`, `a socket`; nil for a regular file, a folder, or a path that cannot
    /// be examined (opening it says why). Looked up without opening it: opening a FIFO would block
    /// until something writes to it.
    public static func specialFileKind(_ path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        switch st.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return nil
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFSOCK: return "a socket"
        default: return "not a regular file"
        }
    }

    /// Why an input that must be read more than once (sniffed, then decoded) is refused when it is
    /// `kind` (`specialFileKind`).
    public static func notRegularReason(_ kind: String) -> String {
        "is \(kind), not a regular file; save it to a file first (ktv opens it more than once: its format is told from its first bytes)"
    }

    /// A regular file's identity: its device and inode, links followed.
    public struct FileID: Hashable, Sendable {
        public let device: UInt64
        public let inode: UInt64
    }

    /// The identity of the regular file `path` names (links followed), nil for anything else (a
    /// missing path, a folder, a device or FIFO, which an output is written into, never replaces).
    public static func regularFileID(_ path: String) -> FileID? {
        guard path != "-" else { return nil }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileID(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// Whether two paths name one regular file (the same device and inode): the path itself, a
    /// symbolic link to it, or a hard link. How an output is kept from replacing an input. `-`
    /// (a standard stream) and devices (`/dev/null`, a terminal both read and written) never are.
    public static func sameFile(_ a: String, _ b: String) -> Bool {
        guard let id = regularFileID(a) else { return false }
        return regularFileID(b) == id
    }

    /// `64 MB`, `512 KB`, `12 bytes`: how messages state a limit.
    public static func describeSize(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KB" }
        return "\(bytes) bytes"
    }

    /// What a failed open or read's `errno` means, in the words ktv's messages use.
    public static func readReason(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "permission denied"
        case EISDIR: return "is a folder, not a file"
        default: return String(cString: strerror(code))
        }
    }

    /// What a failed open or write's `errno` means, in the words ktv's messages use.
    public static func writeReason(_ code: Int32) -> String {
        switch code {
        case ENOSPC: return "no space left on the device"
        case EACCES, EPERM: return "permission denied"
        case ENOENT: return "the folder does not exist"
        default: return String(cString: strerror(code))
        }
    }
}

/// Where an output really goes: symbolic links followed, and what kind of file is there.
public struct OutputTarget: Sendable {
    /// The path as the caller named it (messages use it).
    public let path: String
    /// The file that will be written or replaced, after following symbolic links.
    public let resolvedPath: String
    /// A device, FIFO or socket: written straight into, never replaced.
    public let isSpecial: Bool
    /// Permission bits of an existing regular file, kept when it is replaced.
    public let existingMode: mode_t?

    public init(_ path: String) throws(FileIOError) {
        self.path = path
        // /dev/stdout, /proc/self/fd/N and the like are the caller's open descriptors, not files to
        // replace: written straight into (renaming over them would replace the link in /dev).
        if path.hasPrefix("/proc/") || path.hasPrefix("/dev/fd/") || path == "/dev/stdout" || path == "/dev/stderr" {
            resolvedPath = path
            isSpecial = true
            existingMode = nil
            return
        }
        var current = path
        // Follow links by hand (a dangling link names the file to create), at most 40 deep as the kernel does.
        for _ in 0..<40 {
            var st = stat()
            guard lstat(current, &st) == 0 else {
                guard errno == ENOENT else { throw .cannotWrite(path: path, reason: FileIO.writeReason(errno)) }
                let dir = (current as NSString).deletingLastPathComponent
                var dst = stat()
                if !dir.isEmpty, stat(dir, &dst) != 0 || (dst.st_mode & S_IFMT) != S_IFDIR {
                    throw .cannotWrite(path: path, reason: "folder \(dir) does not exist")
                }
                resolvedPath = current
                isSpecial = false
                existingMode = nil
                return
            }
            switch st.st_mode & S_IFMT {
            case S_IFLNK:
                var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlink(current, &buf, buf.count - 1)
                guard n > 0 else { throw .cannotWrite(path: path, reason: "cannot read the symbolic link \(current)") }
                let link = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                current = link.hasPrefix("/") ? link
                    : ((current as NSString).deletingLastPathComponent as NSString).appendingPathComponent(link)
            case S_IFDIR:
                throw .cannotWrite(path: path, reason: "is a folder, not a file")
            case S_IFREG:
                resolvedPath = current
                isSpecial = false
                existingMode = st.st_mode & 0o7777
                return
            default:
                resolvedPath = current
                isSpecial = true
                existingMode = nil
                return
            }
        }
        throw .cannotWrite(path: path, reason: "too many levels of symbolic links")
    }

    /// Writes bytes into a device or FIFO as it is; standard output and error through their descriptors.
    public func writeStraight(_ bytes: [UInt8]) throws(FileIOError) {
        let (fd, owned) = try openStraight()
        defer { if owned { close(fd) } }
        try FileIO.writeAll(fd: fd, bytes, path: path)
    }

    /// A descriptor to write a special target straight into; `owned` says the caller must close it
    /// (standard output and error are the process's own).
    public func openStraight() throws(FileIOError) -> (fd: Int32, owned: Bool) {
        switch resolvedPath {
        case "/dev/stdout", "/proc/self/fd/1", "/dev/fd/1": return (1, false)
        case "/dev/stderr", "/proc/self/fd/2", "/dev/fd/2": return (2, false)
        default: break
        }
        let fd = open(resolvedPath, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: FileIO.writeReason(errno)) }
        return (fd, true)
    }
}

/// One output written under a temporary name and put in place by `commit()`.
///
/// For a regular (or new) file the temporary sits beside the destination and `commit()` renames it
/// over, keeping the replaced file's permissions. For a device or FIFO it sits in the temporary
/// folder and `commit()` copies it into the special file. Dropped without `commit()`, the temporary
/// is removed, so a failure leaves nothing behind.
public final class AtomicOutput {
    public let target: OutputTarget
    /// Where the producer writes.
    public let temporaryPath: String
    private var settled = false

    public convenience init(path: String) throws(FileIOError) {
        try self.init(OutputTarget(path))
    }

    public init(_ target: OutputTarget) throws(FileIOError) {
        self.target = target
        let name = (target.resolvedPath as NSString).lastPathComponent
        let unique = ".\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let dir = target.isSpecial ? NSTemporaryDirectory() : (target.resolvedPath as NSString).deletingLastPathComponent
        temporaryPath = (dir as NSString).appendingPathComponent(unique)
    }

    deinit { discard() }

    /// Puts the finished temporary file in place.
    public func commit() throws(FileIOError) {
        guard !settled else { return }
        settled = true
        defer { unlink(temporaryPath) }
        if target.isSpecial {
            let bytes = try FileIO.read(temporaryPath)
            try target.writeStraight(bytes)
            return
        }
        if let mode = target.existingMode { chmod(temporaryPath, mode) }
        if rename(temporaryPath, target.resolvedPath) != 0 {
            throw .cannotWrite(path: target.path, reason: FileIO.writeReason(errno))
        }
    }

    /// Removes the temporary file; the destination is untouched.
    public func discard() {
        guard !settled else { return }
        settled = true
        unlink(temporaryPath)
    }
}

/// Several outputs that appear together or not at all: each is written to its temporary name, and
/// `commit()` renames them all only once every one is finished. Dropped without `commit()`, every
/// temporary is removed.
public final class AtomicOutputSet {
    public private(set) var outputs: [AtomicOutput] = []

    public init() {}

    /// Declares one more output; write to the returned temporary path.
    public func add(_ path: String) throws(FileIOError) -> AtomicOutput {
        let output = try AtomicOutput(path: path)
        outputs.append(output)
        return output
    }

    /// Renames every output into place. Renames cannot fail half-way for lack of space, but they can
    /// for permissions; what was not renamed is removed.
    public func commit() throws(FileIOError) {
        var firstError: FileIOError?
        for output in outputs {
            if firstError != nil { output.discard(); continue }
            do { try output.commit() } catch { firstError = error }
        }
        if let firstError { throw firstError }
    }

    public func discard() {
        for output in outputs { output.discard() }
    }
}
