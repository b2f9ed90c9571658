/// "Did you mean": the known words closest to a mistyped command or option.
///
/// Like git's `help.autocorrect` suggestions, but with one plain rule a user
/// can predict: a known word the typed one starts (`stat` → `status`), else the
/// known words at the smallest Damerau-Levenshtein distance (an adjacent swap
/// costs 1, so `stauts` → `status` is one step), when that distance is small
/// for the word's length: at most 1 for words of up to 4 letters, 2 beyond.
/// A looser threshold suggests nonsense for short words (`ls` → `fmt`).
enum Suggestions {
    /// Longer input is not a typo of a command; the distance is not computed.
    static let maximumLength = 64

    /// The candidates closest to `typed`, best first and in `candidates` order
    /// among equals; empty when none is close enough.
    static func closest(to typed: String, among candidates: [String]) -> [String] {
        let word = Array(typed.unicodeScalars)
        guard !word.isEmpty, word.count <= maximumLength else { return [] }
        if word.count >= 2 {
            let prefixed = candidates.filter { $0 != typed && $0.hasPrefix(typed) }
            if !prefixed.isEmpty { return prefixed }
        }
        let threshold = word.count <= 4 ? 1 : 2
        var best = threshold + 1
        var found: [String] = []
        for candidate in candidates {
            let d = distance(word, Array(candidate.unicodeScalars))
            if d < best {
                best = d
                found = [candidate]
            } else if d == best {
                found.append(candidate)
            }
        }
        return found
    }

    /// `; did you mean 'status'?`, `; did you mean 'pull' or 'push'?`, or
    /// nothing: to follow a "not a command" or "unknown option" message.
    static func didYouMean(_ typed: String, among candidates: [String]) -> String {
        let found = closest(to: typed, among: candidates).map { "'\($0)'" }
        guard let last = found.last else { return "" }
        let list = found.count == 1 ? last : found.dropLast().joined(separator: ", ") + " or " + last
        return "; did you mean \(list)?"
    }

    /// The optimal-string-alignment Damerau-Levenshtein distance: insertions,
    /// deletions, substitutions and swaps of two adjacent letters, each 1.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows of the classic table: two back for the swap, one back, this one.
        var twoBack = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d = min(d, twoBack[j - 2] + 1)
                }
                current[j] = d
            }
            (twoBack, previous, current) = (previous, current, twoBack)
        }
        return previous[b.count]
    }
}
