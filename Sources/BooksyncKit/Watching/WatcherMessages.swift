import BooksyncCore

/// A watcher's answer to "what changed since this token?", with the token for now.
package struct WatcherReply: Sendable, Equatable {
    /// What changed since the token asked about; nil when none was given.
    package let answer: ChangeJournal.Answer?
    /// The token for now; nil when nothing is watched (`problem` says why).
    package let token: ChangeJournal.Token?
    /// Why nothing is watched, a sentence.
    package let problem: String?

    package init(answer: ChangeJournal.Answer?, token: ChangeJournal.Token?, problem: String?) {
        self.answer = answer
        self.token = token
        self.problem = problem
    }
}

/// The bytes a command and a watcher process exchange over the watcher's
/// socket (`WatcherClient`, `WatchServer`): one question, one answer, then
/// the connection closes.
///
/// Fields end in a NUL byte, which no path contains (a newline can):
///
///     question: booksync-watch 1 · collection root · folder layout · token or empty
///     answer:   booksync-watch 1 · collection root · changed|cannot|token|none · token or empty · reason or empty · path … · end
///
/// Both sides name the collection root (links resolved), so an answer about
/// another collection is never taken for this one's; the question also
/// names the subcollections the command reads from config.json (`layout`),
/// and a watch started under other ones does not answer (it does not watch
/// the folders they need).
package enum WatcherMessages {
    static let magic = "booksync-watch 1"
    /// The last field of every answer: an answer without it was cut off.
    static let end = "end"
    /// The longest answer read: a journal keeps at most 100,000 paths.
    static let maximumAnswerBytes = 64 << 20
    /// The longest question read.
    static let maximumQuestionBytes = 1 << 16

    /// The question for the watcher of `root`, watching the folders of `layout`.
    static func question(root: String, layout: String, since token: ChangeJournal.Token?) -> [UInt8] {
        fields([magic, root, layout, token?.description ?? ""])
    }

    /// The question's root, layout and token text (empty: only the token for
    /// now is wanted); nil for anything else.
    static func parseQuestion(_ bytes: [UInt8]) -> (root: String, layout: String, token: String)? {
        let parts = split(bytes)
        guard parts.count == 4, parts[0] == magic else { return nil }
        return (parts[1], parts[2], parts[3])
    }

    /// The subcollections as a question names them: their paths, sorted, a line each.
    package static func layout(_ subcollections: Subcollections) -> String {
        subcollections.entries.map { $0.segments.joined(separator: "/") }.sorted().joined(separator: "\n")
    }

    /// The answer for the watcher of `root`.
    static func answer(root: String, _ reply: WatcherReply) -> [UInt8] {
        var kind = "token"
        var reason = reply.problem ?? ""
        var paths: [String] = []
        switch reply.answer {
        case .changed(let changed)?:
            kind = "changed"
            paths = changed.sorted()
        case .cannotVouch(let why)?:
            kind = "cannot"
            reason = why.description
        case nil:
            break
        }
        if reply.token == nil { kind = "none" }
        return fields([magic, root, kind, reply.token?.description ?? "", reason] + paths + [end])
    }

    /// The reply in `bytes` when it is about `root`; nil for anything else.
    static func parseAnswer(_ bytes: [UInt8], root: String) -> WatcherReply? {
        var parts = split(bytes)
        // Without the last field the answer was cut off, and a path may be missing.
        guard parts.count >= 6, parts.removeLast() == end, parts[0] == magic, parts[1] == root else { return nil }
        let token = parts[3].isEmpty ? nil : ChangeJournal.Token(parts[3])
        guard parts[3].isEmpty || token != nil else { return nil }
        switch parts[2] {
        case "changed" where token != nil:
            return WatcherReply(answer: .changed(Set(parts[5...])), token: token, problem: nil)
        case "cannot" where token != nil && parts.count == 5:
            return WatcherReply(answer: .cannotVouch(.told(parts[4])), token: token, problem: nil)
        case "token" where token != nil && parts.count == 5:
            return WatcherReply(answer: nil, token: token, problem: nil)
        case "none" where token == nil && parts.count == 5:
            return WatcherReply(answer: nil, token: nil, problem: parts[4])
        default:
            return nil
        }
    }

    private static func fields(_ parts: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for part in parts {
            out.append(contentsOf: part.utf8.filter { $0 != 0 })
            out.append(0)
        }
        return out
    }

    /// The NUL-terminated fields; bytes after the last NUL are ignored (a cut-off answer loses its last field).
    private static func split(_ bytes: [UInt8]) -> [String] {
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        parts.removeLast()
        return parts
    }
}
