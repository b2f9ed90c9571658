import BooksyncCore
@_spi(Remote) import BooksyncKit

/// How pull, push, sync and watch show what they did: a line per event, and a summary.
extension SyncCommandSupport {
    /// One line per record, then a summary such as `pulled 3, pushed 2, 1 conflict`.
    static func render(_ reports: [SyncReport], context: CommandContext, root: String, conflicts: String = ".booksync/conflicts",
                       unresolvedConflict: (RecordID) -> ConflictKind?) {
        var counts: [SyncCount: Int] = [:]
        renderLines(reports, context: context, root: root, conflicts: conflicts, unresolvedConflict: unresolvedConflict, counts: &counts)
        let dryRun = reports.first?.dryRun == true
        let parts = summaryParts(counts, dryRun: dryRun)
        let prefix = dryRun ? "dry run: nothing written; " : ""
        context.console.out("\(prefix)\(parts.isEmpty ? "nothing to do" : parts.joined(separator: ", "))")
        let stored = reports.contains { report in
            report.command == .pull && !report.dryRun && report.events.contains { if case .conflict = $0.kind { true } else { false } }
        }
        if stored, !context.quiet { context.console.err("booksync: hint: \(conflictHint)") }
    }

    /// The summary's parts in order (`pulled 3`, `2 conflicts`; a dry run's
    /// `would pull 3`), only counts above zero.
    static func summaryParts(_ counts: [SyncCount: Int], dryRun: Bool = false) -> [String] {
        SyncCount.allCases.compactMap { count -> String? in
            guard let n = counts[count], n > 0 else { return nil }
            return count.summary(n, dryRun: dryRun)
        }
    }

    /// The lines of `render` without its summary (a watch prints them round
    /// by round, `live`), each event counted in `counts`.
    static func renderLines(_ reports: [SyncReport], context: CommandContext, root: String, conflicts: String = ".booksync/conflicts",
                            live: Bool = false, unresolvedConflict: (RecordID) -> ConflictKind?, counts: inout [SyncCount: Int]) {
        let color = context.console.colorStdout
        func path(_ id: RecordID) -> TerminalText { context.shownPath(root + "/" + id.fileName) }
        for report in reports {
            let would = report.dryRun ? "would " : ""
            for event in report.events {
                let line = describe(event, path: path(event.id), would: would, command: report.command, conflicts: conflicts,
                                    live: live, unresolvedConflict: unresolvedConflict)
                counts[line.count, default: 0] += 1
                if !context.quiet || line.style == .red { context.console.out(line.style.apply(line.text, enabled: color)) }
            }
            for file in countedUnusableFiles(report, of: reports) {
                let path = context.shownPath(root + "/" + file.fileName)
                context.console.out(Style.red.apply("invalid  \(path): \(file.message)", enabled: color))
                counts[.invalid, default: 0] += 1
            }
            for document in report.unusableRemote {
                context.console.out(Style.red.apply("invalid  remote document '\(name: document.name)': \(document.message) (not pulled)", enabled: color))
                counts[.invalid, default: 0] += 1
            }
            for deletion in report.deletedParents {
                context.console.err(parentDeletionWarning(deletion, command: report.command, would: would, root: root, context: context))
            }
        }
    }

    /// Deleting a document leaves its subcollections, in Firestore and here:
    /// say so, naming the parent, how many records remain and where.
    static func parentDeletionWarning(_ deletion: ParentDeletion, command: SyncPhase, would: String, root: String,
                                      context: CommandContext) -> TerminalText {
        let n = deletion.remainingChildren
        let records = n == 1 ? "1 subcollection record remains" : "\(n) subcollection records remain"
        let folder = context.shownPath(root + "/" + deletion.parent.folderPath)
        let what: TerminalText = command == .pull
            ? "the remote deleted \(name: deletion.parent.rawValue) (pull \(would.isEmpty ? "removes" : "would remove") its file)"
            : "push \(would.isEmpty ? "deletes" : "would delete") \(name: deletion.parent.rawValue) in Firestore"
        return "booksync: warning: \(what), but \(records) below it (\(folder)/…): "
            + "Firestore keeps a deleted document's subcollections, and booksync never deletes them implicitly; delete them on purpose if they should go"
    }

    /// The unusable files to list for `report`: sync's pull and push find the
    /// same ones, so they are listed (and counted) once, under push.
    static func countedUnusableFiles(_ report: SyncReport, of reports: [SyncReport]) -> [UnusableFile] {
        report.command == .push || reports.count == 1 ? report.unusableFiles : []
    }

    /// After a pull stored conflicts: the way out, so the next push is not refused again.
    static let conflictHint = "settle each conflict with 'booksync resolve ID --ours' or '--theirs', or edit the file "
        + "and run 'booksync resolve ID'; 'booksync diff ID' shows both sides"

    /// The one table of how pull, push and sync show each event: its line,
    /// colour, summary bucket, and `action` in `--json`. `live`: inside a
    /// watch, whose next round does what a command would advise running.
    static func describe(_ event: SyncEvent, path: TerminalText, would: String, command: SyncPhase, conflicts: String = ".booksync/conflicts",
                         live: Bool = false, unresolvedConflict: (RecordID) -> ConflictKind? = { _ in nil }) -> EventLine {
        switch event.kind {
        case .pulled(let action):
            switch action {
            case .write: EventLine("\(would)pull     \(path)", .cyan, .pulled, action: "write")
            case .delete: EventLine("\(would)delete   \(path) (deleted remotely)", .cyan, .pulled, action: "delete")
            case .adopt: EventLine("\(would)record   \(path) (same content on both sides)", .green, .recorded, action: "record")
            case .forget: EventLine("\(would)forget   \(event.id) (deleted on both sides)", .green, .recorded, action: "forget")
            case .leaveScope:
                EventLine("\(would)let go   \(path) (left the scope remotely; the file stays, the base lets go)", .cyan, .recorded, action: "leave-scope")
            case .merge: EventLine("\(would)merge    \(path) (fields changed on both sides; push publishes the merge)", .yellow, .merged, action: "merge")
            case .keepLocal: EventLine("\(would)keep     \(path) (ours; push publishes it)", .yellow, .recorded, action: "keep-local")
            case .conflict(let kind): conflictLine(kind, path: path, id: event.id, would: would, conflicts: conflicts)
            }
        case .pushed(let action):
            switch action {
            case .create: EventLine("\(would)create   \(event.id)", .green, .pushed, action: "create")
            case .update: EventLine("\(would)update   \(event.id)", .green, .pushed, action: "update")
            case .delete: EventLine("\(would)delete   \(event.id)", .green, .pushed, action: "delete")
            case .adopt: EventLine("\(would)record   \(event.id) (the remote already had this content)", .green, .recorded, action: "record")
            case .forget: EventLine("\(would)forget   \(event.id) (already deleted remotely)", .green, .recorded, action: "forget")
            // A seed's steps are reported as seeded; these are their lines should one appear as pushed.
            case .overwrite: describe(SyncEvent(id: event.id, kind: .seeded(deleted: false)), path: path, would: would, command: command)
            case .remove: describe(SyncEvent(id: event.id, kind: .seeded(deleted: true)), path: path, would: would, command: command)
            }
        case .seeded(deleted: false):
            EventLine("\(would)write    \(event.id)", .green, .pushed, action: "write")
        case .seeded(deleted: true):
            EventLine("\(would)delete   \(event.id) (no record file)", .green, .pushed, action: "delete")
        case .conflict(let kind):
            conflictLine(kind, path: path, id: event.id, would: would, conflicts: conflicts)
        case .remoteChangedSincePull:
            // Pull already found and stored this conflict: only resolve gets it out.
            if let kind = unresolvedConflict(event.id) {
                EventLine(resolveAdvice(kind, path: path, id: event.id), .red, .conflict, action: "remote-changed")
            } else {
                EventLine("remote changed '\(event.id)' since your last pull; "
                          + (live ? "the next poll pulls it" : "run 'booksync pull'") + " (it merges the change or stores the conflict)",
                          .red, .remoteChanged, action: "remote-changed")
            }
        case .invalidLocal(let diagnostics):
            EventLine("invalid  \(path)\(StatusRenderer.firstProblem(diagnostics)) (not \(command == .pull ? "overwritten" : "sent"))", .red, .invalid, action: "invalid")
        case .invalidRemote(let diagnostics):
            EventLine("invalid  remote \(event.id)\(StatusRenderer.firstProblem(diagnostics)) (not pulled)", .red, .invalid, action: "invalid")
        case .rejected(let message):
            EventLine("rejected \(event.id): \(message)", .red, .rejected, action: "rejected")
        case .outsideScope:
            EventLine("outside  \(path) (outside the scope: the file or its document does not match; not pushed)", .yellow, .outsideScope, action: "outside-scope")
        case .changedDuringSync:
            EventLine("skipped  \(path): it changed while booksync was working; " + (live ? "the next round tries again" : "run the command again"),
                      .red, .skipped, action: "skipped")
        }
    }

    /// `conflicts`: where the remote side is stored, relative to the collection (the selected remote's folder).
    static func conflictLine(_ kind: ConflictKind, path: TerminalText, id: RecordID, would: String, conflicts: String) -> EventLine {
        let what = StatusRenderer.describe(kind).trimmingWhitespace.trimmingSuffix(":")
        let saved = would.isEmpty && kind != .modifiedLocallyDeletedRemotely ? "; remote side in \(conflicts)/\(id.stateFileName)" : ""
        return EventLine("conflict \(path): \(what)\(StatusRenderer.fieldList(kind))\(saved)", .red, .conflict, action: "conflict")
    }

    /// Push's line for a record whose conflict pull stored: the resolve
    /// commands that settle it, and what each does for this kind of conflict.
    static func resolveAdvice(_ kind: ConflictKind, path: TerminalText, id: RecordID) -> TerminalText {
        let resolve = "booksync resolve \(commandArgument(id))"
        switch kind {
        case .deletedLocallyModifiedRemotely:
            return "conflict \(path): deleted here, modified remotely; settle it with '\(resolve) --ours' "
                + "(push then deletes it remotely) or '\(resolve) --theirs' (restores the remote version here)"
        case .modifiedLocallyDeletedRemotely:
            return "conflict \(path): modified here, deleted remotely; settle it with '\(resolve) --ours' "
                + "(push then re-creates it remotely) or '\(resolve) --theirs' (deletes it here)"
        default:
            return "conflict \(path): changed on both sides; settle it with '\(resolve) --ours' or '--theirs' "
                + "(each conflicting field from that side; 'booksync diff \(commandArgument(id))' shows them), "
                + "or edit the file and run '\(resolve)'"
        }
    }

    /// How to name `id` on a command line so a shell passes it unchanged: the
    /// id itself when it is plain (`[A-Za-z0-9_.-]`), else its file name, which
    /// resolve and diff accept and which is plain ASCII (`%XX` escapes). A
    /// leading `-` would read as an option, so such names get `./`.
    static func commandArgument(_ id: RecordID) -> String {
        let name = id.encodedName == id.rawValue ? id.rawValue : id.fileName
        return name.hasPrefix("-") ? "./" + id.fileName : name
    }
}

/// One event of pull, push or sync as `SyncCommandSupport.describe` shows it.
struct EventLine {
    /// The text line (without the colour).
    let text: TerminalText
    let style: Style
    /// The summary bucket it counts in.
    let count: SyncCount
    /// Its `action` in the `--json` events.
    let action: String

    init(_ text: TerminalText, _ style: Style, _ count: SyncCount, action: String) {
        self.text = text
        self.style = style
        self.count = count
        self.action = action
    }
}

/// The buckets the summary of pull, push and sync counts events in, in the
/// summary's order; the raw value is the key in `--json` `counts`.
enum SyncCount: String, CaseIterable {
    case pulled, pushed, merged, recorded, conflict
    case remoteChanged = "remote-changed"
    case invalid, rejected, skipped
    case outsideScope = "outside-scope"

    /// `n` events of the bucket in the text summary: the verbs come first
    /// (`pulled 3`), the rest after the count (`2 conflicts`, `1 remote changed`).
    /// A dry run did none of it: its verbs say what it would do (`would push 2`).
    func summary(_ n: Int, dryRun: Bool = false) -> String {
        switch self {
        case .pulled, .pushed, .merged, .recorded: dryRun ? "would \(verb) \(n)" : "\(rawValue) \(n)"
        case .conflict: plural(n, "conflict")
        case .remoteChanged: "\(n) remote changed"
        case .invalid, .rejected, .skipped: "\(n) \(rawValue)"
        case .outsideScope: "\(n) outside the scope"
        }
    }

    /// The verb of a bucket that is one (`push` for `pushed`).
    private var verb: String {
        switch self {
        case .pulled: "pull"
        case .pushed: "push"
        case .merged: "merge"
        case .recorded: "record"
        default: rawValue
        }
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
