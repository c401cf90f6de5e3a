import Foundation

/// A process's peak resident memory, as Linux keeps it (`VmHWM` in `/proc/PID/status`); nil where
/// there is no such file (other systems, a process that has exited).
public enum ProcessMemory {
    /// Peak resident set of `pid` (this process when nil), bytes.
    public static func peakResidentBytes(pid: Int32? = nil) -> Int? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let bytes = try? FileIO.read(path, maxBytes: 1 << 16) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            return kb.map { $0 * 1024 }
        }
        return nil
    }
}
