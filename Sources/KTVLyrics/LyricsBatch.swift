import Foundation
import KTVCore

/// Validating many lyric files in one process: folders walked, files read with the text ceiling,
/// parsed and validated in parallel (files are independent), findings in input order.
public enum LyricsBatch {
    /// File endings a folder walk picks up: every format's (`LyricFormat.fileExtensions`).
    public static let extensions: Set<String> = Set(LyricFormat.allCases.flatMap(\.fileExtensions))

    /// Rule id of the finding for a file over `LyricsParseOptions.maxTextBytes` (a front end may add
    /// how it raises the limit).
    public static let tooLargeRule = "too-large"

    /// A file as given, or every lyric file below a folder (hidden files skipped), sorted. `-` is
    /// standard input.
    public static func expand(_ path: String) throws(FileIOError) -> [String] { try walk(path).files }

    /// What a folder walk found: the files to read, and the entries with a lyric file's ending
    /// that it passed over because they are no regular file nor a link to one (a FIFO would block
    /// the walk forever, a socket or device cannot be read), with what each is.
    public struct Walk: Sendable {
        public var files: [String] = []
        public var skipped: [(path: String, kind: String)] = []
    }

    /// `expand`, saying what was passed over. A path given itself is read whatever it is (a FIFO
    /// named on purpose is a stream, like `-`); only what a folder holds is filtered.
    public static func walk(_ path: String) throws(FileIOError) -> Walk {
        if path == "-" { return Walk(files: [path]) }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw .cannotRead(path: path, reason: "no such file or folder")
        }
        guard isDir.boolValue else { return Walk(files: [path]) }
        guard let top = opendir(path) else { throw .cannotRead(path: path, reason: "folder cannot be listed") }
        var found = Walk()
        var base = path
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        list(top, base, into: &found)
        found.files.sort()
        found.skipped.sort { $0.path < $1.path }
        return found
    }

    /// Every lyric file below `folder` (already open; closed here) into `found`, depth first. With
    /// `readdir` and the entry types it gives, not FileManager's enumerator: listing 10,000 files
    /// took it a tenth of `lyrics validate`'s time, and a stat for each. Entries whose names start
    /// with `.` are skipped (the folders too are still walked, as before); links to folders are
    /// not followed; a subfolder that cannot be opened is passed over.
    private static func list(_ folder: OpaquePointer, _ path: String, into found: inout Walk) {
        defer { closedir(folder) }
        while let entry = readdir(folder) {
            let (name, type) = withUnsafePointer(to: entry.pointee.d_name) { p in
                p.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { (String(cString: $0), entry.pointee.d_type) }
            }
            if name == "." || name == ".." { continue }
            let full = path == "/" ? "/" + name : path + "/" + name
            var mode: mode_t
            switch Int32(type) {
            case Int32(DT_DIR): mode = S_IFDIR
            case Int32(DT_REG): mode = S_IFREG
            default:
                var st = stat()
                guard lstat(full, &st) == 0 else { continue }
                mode = st.st_mode & S_IFMT
            }
            if mode == S_IFDIR {
                if let sub = opendir(full) { list(sub, full, into: &found) }
                continue
            }
            if name.hasPrefix(".") { continue }
            guard let dot = name.lastIndex(of: "."), extensions.contains(name[name.index(after: dot)...].lowercased()) else { continue }
            if mode == S_IFLNK {
                var st = stat()
                guard stat(full, &st) == 0 else { found.skipped.append((full, "a broken link")); continue }
                mode = st.st_mode & S_IFMT
            }
            switch mode {
            case S_IFREG: found.files.append(full)
            case S_IFDIR: continue   // a link to a folder: not followed
            case S_IFIFO: found.skipped.append((full, "a FIFO (named pipe)"))
            case S_IFSOCK: found.skipped.append((full, "a socket"))
            case S_IFCHR, S_IFBLK: found.skipped.append((full, "a device"))
            default: found.skipped.append((full, "not a regular file"))
            }
        }
    }

    /// Reads, parses and validates each file, spread over the cores.
    public static func validate(_ paths: [String], options: LyricsParseOptions) -> [FileFindings] {
        final class Slots: @unchecked Sendable {
            // Each index is written by exactly one iteration, under the lock.
            var items: [FileFindings?]
            let lock = NSLock()
            init(_ n: Int) { items = .init(repeating: nil, count: n) }
        }
        let slots = Slots(paths.count)
        let chunk = max(1, paths.count / (ProcessInfo.processInfo.activeProcessorCount * 8))
        let chunks = (paths.count + chunk - 1) / chunk
        DispatchQueue.concurrentPerform(iterations: chunks) { c in
            var local: [(Int, FileFindings)] = []
            for k in (c * chunk)..<min(paths.count, (c + 1) * chunk) {
                local.append((k, readOne(paths[k], options: options).findings))
            }
            slots.lock.lock()
            for (k, r) in local { slots.items[k] = r }
            slots.lock.unlock()
        }
        return slots.items.map { $0 ?? FileFindings(path: "", diagnostics: [], fatal: true) }
    }

    /// Reads, parses and validates one file; the model too, when the file could be read as lyrics.
    /// A file that cannot be read from disk is `unreadable` (an I/O problem); one that is not lyrics
    /// is `fatal`.
    public static func readOne(_ path: String, options: LyricsParseOptions) -> (findings: FileFindings, parsed: ParsedLyrics?) {
        let bytes: [UInt8]
        do { bytes = try FileIO.read(path, maxBytes: options.maxTextBytes) } catch {
            if case let .tooLarge(_, limit) = error {
                let e = tooLargeInput(path, limitBytes: limit)
                return (FileFindings(path: path, diagnostics: [.error(tooLargeRule, "\(e)")], fatal: true), nil)
            }
            var findings = FileFindings(path: path, diagnostics: [.error("unreadable", "\(error)")], fatal: true)
            findings.unreadable = true
            return (findings, nil)
        }
        do {
            let parsed = try LyricsReader.read(consume bytes, fileName: path == "-" ? nil : path, options: options)
            return (FileFindings(path: path, diagnostics: LyricsValidator.validate(parsed)), parsed)
        } catch {
            var d = Diagnostic(rule: "unreadable", severity: .error, line: error.line, message: "\(error)")
            switch error {
            case let .undecodable(offset, detail): d.byteOffset = offset; d.message = detail
            case let .badContainer(offset?, detail): d.byteOffset = offset; d.message = detail
            case let .malformed(_, detail): d.message = detail
            case .tooLarge: d.rule = tooLargeRule
            default: break
            }
            return (FileFindings(path: path, diagnostics: [d], fatal: true), nil)
        }
    }

    /// The error for an input refused by its size: a regular file's size is known; of standard
    /// input, a pipe or a device (whose `st_size` is 0: `/dev/zero` is no empty file) only that it
    /// went past the limit.
    public static func tooLargeInput(_ path: String, limitBytes: Int) -> LyricsError {
        var st = stat()
        if path != "-", stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            return .tooLarge(limitBytes: limitBytes, detail: "the input is \(st.st_size) bytes")
        }
        return .tooLarge(limitBytes: limitBytes, detail: "the input is more than \(limitBytes) bytes")
    }
}
