import BooksyncCore

/// The classes `status` sorts records into, in the order every output lists
/// them, each with all its names: the heading, hint and colour of its group in
/// the text output, its word in the summary line, and its `class` in `--json`
/// (`status` and `diff`). A record's `--short` columns depend on the change
/// within its class (`A `, ` M`, `UD`), so they sit beside the class in
/// `SyncState.statusNames`.
enum StatusClass: String, CaseIterable {
    case clean
    case localChange = "local-change"
    case remoteChange = "remote-change"
    case converged, mergeable, conflict, invalid
    case outsideScope = "outside-scope"

    /// `class` in `status --json` and `diff --json`, and its key in `counts`.
    var json: String { rawValue }

    /// The heading of the class's group in the text output; clean records are not listed.
    var heading: String? {
        switch self {
        case .clean: nil
        case .localChange: "Local changes not yet pushed:"
        case .remoteChange: "Remote changes not yet pulled:"
        case .converged: "Changed the same way on both sides:"
        case .mergeable: "Changed on both sides, mergeable field by field:"
        case .conflict: "Conflicts:"
        case .invalid: "Invalid records (booksync neither sends nor overwrites them):"
        case .outsideScope: "New records outside the scope (config.json \"scope\"):"
        }
    }

    /// What to do about the group, under its heading (unless `--quiet`).
    var hint: String {
        switch self {
        case .clean: ""
        case .localChange: "(booksync push publishes them)"
        case .remoteChange: "(booksync pull applies them)"
        case .converged: "(the next pull or push records them)"
        case .mergeable: "(booksync pull merges them, then push publishes the merge)"
        // Per record by resolve once pull has stored the remote side, or all at once by pull --ours/--theirs.
        case .conflict: "(booksync resolve ID --ours or --theirs settles one after a pull; booksync pull --ours or --theirs settles all)"
        case .invalid: "(fix them; booksync validate lists every problem)"
        case .outsideScope: "(booksync push does not create them: the documents would not match the scope)"
        }
    }

    /// The invalid group's hint when some of it came from the remote: booksync
    /// cannot fix a remote document, whoever writes it must.
    static let invalidRemoteHint = "(fix the files, booksync validate lists every problem; fix or delete the remote documents where they are written)"

    /// The colour of its entries, in the text and `--short` outputs.
    var style: Style {
        switch self {
        case .clean, .localChange, .converged: .green
        case .remoteChange: .cyan
        case .mergeable, .outsideScope: .yellow
        case .conflict, .invalid: .red
        }
    }

    /// `n` records of the class in the summary line: countable nouns get a
    /// plural (`2 conflicts`), the adjectives do not (`2 invalid`).
    func summary(_ n: Int) -> String {
        switch self {
        case .localChange: plural(n, "local change")
        case .remoteChange: plural(n, "remote change")
        case .conflict: plural(n, "conflict")
        case .clean, .converged, .mergeable, .invalid: "\(n) \(rawValue)"
        case .outsideScope: "\(n) outside the scope"
        }
    }
}

/// How status names one record state: its class, its two `--short` columns
/// (local side, remote side), and the `local` and `remote` words of `--json`.
struct StatusNames {
    let statusClass: StatusClass
    let short: String
    let local: String?
    let remote: String?
}

extension SyncState {
    /// The one table of how each state is named in status's outputs.
    var statusNames: StatusNames {
        switch self {
        case .clean: StatusNames(statusClass: .clean, short: "  ", local: nil, remote: nil)
        case .localChange(let kind): StatusNames(statusClass: .localChange, short: kind.letter + " ", local: kind.rawValue, remote: nil)
        case .remoteChange(let kind): StatusNames(statusClass: .remoteChange, short: " " + kind.letter, local: nil, remote: kind.rawValue)
        case .converged: StatusNames(statusClass: .converged, short: "==", local: "changed", remote: "changed")
        case .mergeable: StatusNames(statusClass: .mergeable, short: "MM", local: "modified", remote: "modified")
        case .conflict(.bothModified): StatusNames(statusClass: .conflict, short: "UU", local: "modified", remote: "modified")
        case .conflict(.bothAdded): StatusNames(statusClass: .conflict, short: "AA", local: "added", remote: "added")
        case .conflict(.modifiedLocallyDeletedRemotely): StatusNames(statusClass: .conflict, short: "UD", local: "modified", remote: "deleted")
        case .conflict(.deletedLocallyModifiedRemotely): StatusNames(statusClass: .conflict, short: "DU", local: "deleted", remote: "modified")
        case .conflict(.remoteContentUnknown): StatusNames(statusClass: .conflict, short: "UU", local: "changed", remote: "changed")
        case .invalidLocal: StatusNames(statusClass: .invalid, short: "! ", local: "invalid", remote: nil)
        case .invalidRemote: StatusNames(statusClass: .invalid, short: " !", local: nil, remote: "invalid")
        case .leftScope: StatusNames(statusClass: .remoteChange, short: " L", local: nil, remote: "left-scope")
        case .outsideScope: StatusNames(statusClass: .outsideScope, short: "O ", local: "outside-scope", remote: nil)
        }
    }
}

extension ChangeKind {
    /// The `--short` letter of a one-sided change: `A`, `M`, `D`.
    var letter: String {
        switch self {
        case .added: "A"
        case .modified: "M"
        case .deleted: "D"
        }
    }
}
