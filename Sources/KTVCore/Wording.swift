// Words in messages and pages: a count with its noun, and the nearest of some names to a
// mistyped one.

/// `n` and the noun, plural unless `n` is 1: `counted(1, "take")` is "1 take", `counted(3, "take")`
/// "3 takes"; `plural` for a noun that does not just add an s.
public func counted(_ n: Int, _ noun: String, plural: String? = nil) -> String {
    "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
}

/// The string among `candidates` nearest to `text`, for a "did you mean" hint: fewest single-character
/// edits (Levenshtein distance, case ignored), the first on a tie; nil when there are none.
public func nearest(_ text: String, among candidates: [String]) -> (match: String, distance: Int)? {
    let a = Array(text.lowercased())
    func distance(_ word: String) -> Int {
        let b = Array(word.lowercased())
        var row = Array(0...b.count)   // edits from a's first i characters to b's first j
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
    return candidates.map { ($0, distance($0)) }.min { $0.1 < $1.1 }
}
