/// Findings about the log that would repeat on many lines: counted, reported once with the first place.
struct NoteCounter {
    private var order: [String] = []
    private var entries: [String: (count: Int, file: String, line: Int, message: String)] = [:]

    mutating func add(_ rule: String, key: String? = nil, file: String, line: Int, _ message: @autoclosure () -> String) {
        let k = rule + "\u{1}" + (key ?? "")
        if let e = entries[k] {
            entries[k] = (e.count + 1, e.file, e.line, e.message)
        } else {
            order.append(k)
            entries[k] = (1, file, line, message())
        }
    }

    var notes: [LogNote] {
        order.map { k in
            let e = entries[k]!
            let rule = String(k.split(separator: "\u{1}", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let more = e.count > 1 ? " (\(e.count) lines like this; the first is shown)" : ""
            return LogNote(rule: rule, file: e.file, line: e.line, message: e.message + more)
        }
    }
}
