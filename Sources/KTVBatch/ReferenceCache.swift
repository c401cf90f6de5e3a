import Foundation
import KTVCore
import KTVScore

/// Reference melodies shared by every worker of a batch: a song's reference is read once however
/// many takes use it. An entry is keyed by the reference's and lyrics' paths, sizes and modification
/// times, so a file replaced during the run is read again. A reference that cannot be read is
/// remembered too (each of its takes gets the same error without re-reading it). Workers asking for
/// an entry being read wait for it instead of reading it again. At most `capacity` entries are
/// kept; the least recently used goes first.
final class ReferenceCache: @unchecked Sendable {
    struct Key: Hashable {
        var path: String
        var lyricsPath: String?
        var stamp: [Int]
    }

    private enum Entry {
        case loading
        case done(Result<ReferenceMelody, BatchFailure>, lastUse: Int)
    }

    let capacity: Int
    let options: ReferenceOptions
    private var entries: [Key: Entry] = [:]
    private var clock = 0
    private let condition = NSCondition()
    /// References read from disk (for tests: a reference used by many takes counts once).
    private(set) var loads = 0

    init(options: ReferenceOptions, capacity: Int = 256) {
        self.options = options
        self.capacity = max(1, capacity)
    }

    /// The melody of `path` (with `lyricsPath`'s words), read now or earlier.
    func melody(path: String, lyricsPath: String?, read: (String, String?, ReferenceOptions) throws -> ReferenceMelody) -> Result<ReferenceMelody, BatchFailure> {
        let key = Key(path: path, lyricsPath: lyricsPath, stamp: Self.stamp(path) + (lyricsPath.map(Self.stamp) ?? []))
        condition.lock()
        while true {
            switch entries[key] {
            case .loading?:
                condition.wait()
                continue
            case let .done(result, _)?:
                clock += 1
                entries[key] = .done(result, lastUse: clock)
                condition.unlock()
                return result
            case nil:
                break
            }
            break
        }
        entries[key] = .loading
        loads += 1
        condition.unlock()

        let result: Result<ReferenceMelody, BatchFailure>
        do { result = .success(try read(path, lyricsPath, options)) } catch {
            result = .failure(BatchFailure(error, stage: .reference))
        }

        condition.lock()
        clock += 1
        entries[key] = .done(result, lastUse: clock)
        evict()
        condition.broadcast()
        condition.unlock()
        return result
    }

    /// Drops the least recently used finished entries past the capacity (under the lock).
    private func evict() {
        guard entries.count > capacity else { return }
        let finished = entries.compactMap { key, entry -> (Key, Int)? in
            if case let .done(_, lastUse) = entry { return (key, lastUse) }
            return nil
        }.sorted { $0.1 < $1.1 }
        for (key, _) in finished.prefix(entries.count - capacity) { entries[key] = nil }
    }

    /// Size and modification time (ns), or [-1] when the file cannot be stat'ed (the read then says why).
    static func stamp(_ path: String) -> [Int] {
        var st = stat()
        guard stat(path, &st) == 0 else { return [-1] }
        return [Int(st.st_size), Int(st.st_mtim.tv_sec) * 1_000_000_000 + Int(st.st_mtim.tv_nsec)]
    }
}
