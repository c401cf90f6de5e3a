#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KTVCore

/// Reads progress logs (JSON Lines) in blocks, decodes each line into a compact event and puts
/// every device's events in order. The text is never held whole, so a 3-hour room streams through.
public enum LogReader {
    /// Lines longer than this are refused: no event is anywhere near it, and it bounds memory.
    public static let maxLineBytes = 4 << 20

    /// Reads log files in the order given (`-` is standard input). Several devices' logs may be
    /// concatenated or given as separate files.
    public static func read(paths: [String]) throws(SyncError) -> ReplayLog {
        var builder = LogBuilder()
        for path in paths {
            try builder.readFile(path)
        }
        return builder.finish()
    }

    /// Reads a log held in memory (tests, generated logs).
    public static func read(bytes: [UInt8], name: String = "<log>") throws(SyncError) -> ReplayLog {
        var builder = LogBuilder()
        let file = builder.addFile(name)
        try builder.consume(bytes[...], file: file, final: true)
        return builder.finish()
    }
}

/// Accumulates decoded events file by file.
struct LogBuilder {
    var decoder = EventDecoder()
    var files: [String] = []
    var devices: [DeviceLog] = []
    var truths: [TruthRecord] = []
    var eventCount = 0
    var notes: [LogNote] = []
    // Per-file line state.
    var lineNumber = 0
    var carry: [UInt8] = []

    mutating func addFile(_ name: String) -> Int {
        files.append(name)
        lineNumber = 0
        carry = []
        return files.count - 1
    }

    mutating func readFile(_ path: String) throws(SyncError) {
        let name = path == "-" ? "<stdin>" : path
        let file = addFile(name)
        let fd: Int32
        if path == "-" {
            fd = 0
        } else {
            var st = stat()
            if stat(path, &st) != 0 {
                throw .cannotRead(path: path, reason: errno == ENOENT ? "no such file" : String(cString: strerror(errno)))
            }
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .cannotRead(path: path, reason: "is a folder, not a log file") }
            fd = open(path, O_RDONLY)
            if fd < 0 { throw .cannotRead(path: path, reason: String(cString: strerror(errno))) }
        }
        defer { if fd != 0 { close(fd) } }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: name, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            try consume(buffer[0..<n], file: file, final: false)
        }
        try consume([], file: file, final: true)
    }

    /// Feeds bytes; whole lines are decoded, a partial last line waits for the next block.
    mutating func consume(_ chunk: ArraySlice<UInt8>, file: Int, final: Bool) throws(SyncError) {
        let data = chunk
        var start = data.startIndex
        if !carry.isEmpty {
            // Finish the line begun in the previous block.
            if let nl = data.firstIndex(of: 0x0A) {
                carry.append(contentsOf: data[start..<nl])
                let line = carry
                carry = []
                try handleLine(line[...], file: file)
                start = nl + 1
            } else {
                carry.append(contentsOf: data)
                if carry.count > LogReader.maxLineBytes { throw lineTooLong(file) }
                if final, !carry.isEmpty {
                    let line = carry
                    carry = []
                    try handleLine(line[...], file: file)
                }
                return
            }
        }
        while start < data.endIndex {
            guard let nl = data[start...].firstIndex(of: 0x0A) else {
                carry.append(contentsOf: data[start...])
                if carry.count > LogReader.maxLineBytes { throw lineTooLong(file) }
                break
            }
            try handleLine(data[start..<nl], file: file)
            start = nl + 1
        }
        if final, !carry.isEmpty {
            let line = carry
            carry = []
            try handleLine(line[...], file: file)
        }
    }

    func lineTooLong(_ file: Int) -> SyncError {
        .malformedLog(file: files[file], line: lineNumber + 1, field: nil,
                      detail: "a line longer than \(LogReader.maxLineBytes >> 20) MiB; each event must be one line (JSON Lines)")
    }

    mutating func handleLine(_ raw: ArraySlice<UInt8>, file: Int) throws(SyncError) {
        lineNumber += 1
        var line = raw
        if let last = line.last, last == 0x0D { line = line.dropLast() }
        if lineNumber == 1, line.count >= 3, line[line.startIndex] == 0xEF, line[line.startIndex + 1] == 0xBB, line[line.startIndex + 2] == 0xBF {
            line = line.dropFirst(3)
        }
        // Blank lines and `#` comments are allowed.
        var k = line.startIndex
        while k < line.endIndex, line[k] == 0x20 || line[k] == 0x09 { k += 1 }
        if k == line.endIndex || line[k] == 0x23 { return }
        let decoded = try line.withUnsafeBufferPointer { buf throws(SyncError) in
            try decoder.decode(buf, file: file, fileName: files[file], line: lineNumber)
        }
        eventCount += 1
        switch decoded {
        case let .event(device, event):
            ensure(device)
            devices[device].events.append(event)
            devices[device].eventCount += 1
        case let .send(device):
            ensure(device)
            devices[device].sendCount += 1
            devices[device].eventCount += 1
        case let .truth(device, ntp, value):
            truths.append(TruthRecord(device: decoder.devices.names[device], ntpMs: ntp, value: value))
        }
    }

    mutating func ensure(_ device: Int) {
        while devices.count <= device { devices.append(DeviceLog(name: decoder.devices.names[devices.count])) }
    }

    /// Orders each device's events by its monotonic clock and fills in NTP times that were not logged.
    mutating func finish() -> ReplayLog {
        ensure(decoder.devices.names.count - 1)
        var notes = decoder.notes.notes
        for d in devices.indices {
            var events = devices[d].events
            var outOfOrder = 0
            var firstBad: SourceRef?
            for k in 1..<max(1, events.count) where events[k].atMs < events[k - 1].atMs {
                outOfOrder += 1
                if firstBad == nil { firstBad = events[k].source }
            }
            if outOfOrder > 0 {
                // A stable sort keeps file order for equal `at` (a recv and the seek it caused).
                events = events.enumerated().sorted { a, b in
                    a.element.atMs != b.element.atMs ? a.element.atMs < b.element.atMs : a.offset < b.offset
                }.map(\.element)
                let src = firstBad!
                notes.append(LogNote(rule: "out-of-order", file: files[Int(src.file)], line: Int(src.line),
                                     message: "\(outOfOrder) event(s) of \(quoted(devices[d].name)) come before an earlier `at` in the file; replay puts them in `at` order"))
            }
            // NTP time of events logged without one: `at` plus the device's NTP offset at the
            // nearest stamped event before (or, at the start, after) it.
            if let firstStamped = events.firstIndex(where: { $0.ntpGiven }) {
                var offset = events[firstStamped].ntpMs - events[firstStamped].atMs
                var steps = 0
                var stepSource: SourceRef?
                for k in events.indices {
                    if events[k].ntpGiven {
                        let o = events[k].ntpMs - events[k].atMs
                        if k > firstStamped, abs(o - offset) > 50 {
                            steps += 1
                            if stepSource == nil { stepSource = events[k].source }
                        }
                        offset = o
                    } else {
                        events[k].ntpMs = events[k].atMs + offset
                    }
                }
                if steps > 0, let src = stepSource {
                    notes.append(LogNote(rule: "ntp-step", file: files[Int(src.file)], line: Int(src.line),
                                         message: "the NTP time of \(quoted(devices[d].name)) jumps against its `at` clock \(steps) time(s) by more than 50 ms; sync math across the jump may be off"))
                }
            } else if !events.isEmpty {
                let src = events[0].source
                notes.append(LogNote(rule: "no-ntp", file: files[Int(src.file)], line: Int(src.line),
                                     message: "\(quoted(devices[d].name)) logged no `ntp` at all; its events cannot be placed in NTP time and are left out of the sync math"))
                devices[d].hasNTP = false
                for k in events.indices { events[k].ntpMs = events[k].atMs }
            }
            devices[d].events = events
        }
        return ReplayLog(files: files, devices: devices, truths: truths, notes: notes, eventCount: eventCount)
    }
}
