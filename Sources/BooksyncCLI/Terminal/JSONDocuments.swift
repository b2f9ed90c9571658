import BooksyncCore
@_spi(Remote) import BooksyncKit

/// The `--json` documents of pull, push, sync and validate, beside `status
/// --json` (`StatusRenderer.json`) and `diff --json`, in the same vocabulary:
/// each is one JSON object with `"version": 1` first, keys otherwise sorted,
/// written by `CanonicalJSON`; record ids, file names and messages are exact
/// strings (JSON-escaped, and the scalars a terminal would act on written
/// `\uXXXX` by `TerminalText(json:)`). Stable: fields are only ever added;
/// a change of meaning gets a new version.
enum JSONDocuments {
    /// The one writer of every `--json` document.
    static func text(_ document: Fields) -> TerminalText {
        let bytes = CanonicalJSON.encode(document, leadingKeys: ["version"])
        return TerminalText(json: String(decoding: bytes.dropLast(), as: UTF8.self))
    }

    /// Problems as `status --json` lists them: `LINE:COLUMN: message` for a
    /// syntax or value error, the message alone otherwise.
    static func problems(_ diagnostics: [RecordDiagnostic]) -> Value {
        .array(diagnostics.map { .string($0.description) })
    }

    /// `[{"file": NAME, "problem": MESSAGE}]`, as in `status --json`.
    static func unusableFiles(_ files: [UnusableFile]) -> Value {
        .array(files.map { .map(["file": .string($0.fileName), "problem": .string($0.message)]) })
    }

    /// `[{"id": NAME, "problem": MESSAGE}]`, as in `status --json`.
    static func unusableRemote(_ documents: [UnusableRemoteDocument]) -> Value {
        .array(documents.map { .map(["id": .string($0.name), "problem": .string($0.message)]) })
    }

    // MARK: pull, push, sync

    /// The `--json` document of `pull`, `push` and `sync` (version 1):
    ///
    /// - `version`: 1.
    /// - `command`: `"pull"`, `"push"` or `"sync"`.
    /// - `collection`: absolute path of the collection directory.
    /// - `dryRun`: true with `--dry-run`: every event is what would happen, nothing was written.
    /// - `phases`: one object per phase that ran, in order: pull, push, or
    ///   both for sync (only pull for `sync --dry-run`, whose push depends on
    ///   the files after a real pull). Each has:
    ///   - `command`: `"pull"` or `"push"`;
    ///   - `events`: one object per record the phase acted on or reported,
    ///     in the order of the text lines: `id` (the exact record id),
    ///     `file` (its file name in the collection directory), `action`, and
    ///     by action:
    ///       - pull: `write` (remote version written locally), `delete`
    ///         (deleted remotely, removed here), `record` (same content on both
    ///         sides, recorded in the base), `forget` (deleted on both sides),
    ///         `merge` (fields changed on both sides merged into the file; push
    ///         publishes it), `keep-local` (`--ours` kept the local file);
    ///       - push: `create`, `update`, `delete` (the remote write),
    ///         `record` (the remote already had this content), `forget`
    ///         (already deleted remotely);
    ///       - either: `conflict` with `local` and `remote` as in `status
    ///         --json` (`modified`, `added`, `deleted`, `changed`) and, when
    ///         both modified the same fields, `conflictFields` and
    ///         `conflictPaths` (see `conflictPaths(_:into:)`);
    ///         `remote-changed` (push: the remote changed since the last pull)
    ///         with `unresolvedConflict` (true when pull already stored a
    ///         conflict for it that resolve has not settled); `invalid` with
    ///         `local: "invalid"` or `remote: "invalid"` and `problems`;
    ///         `rejected` (the server refused the write) with `message`;
    ///         `skipped` (the file changed while booksync worked on it).
    ///   - `unusableFiles`: `[{file, problem}]`, files whose name is not a record id.
    ///   - `unusableRemote`: `[{id, problem}]`, documents that cannot be records.
    ///   - `deletedParents` (only when there are some): `[{id,
    ///     remainingChildren}]`, deleted documents whose subcollection
    ///     records remain (neither Firestore nor booksync deletes them).
    /// - `counts`: every key always present, counted as the text summary
    ///   counts them: `pulled`, `pushed`, `merged`, `recorded`, `conflict`,
    ///   `remote-changed`, `invalid`, `rejected`, `skipped` (for sync, an
    ///   unusable file is counted once, under push).
    /// - `needsAttention`: true when the exit status is 1.
    static func syncReports(_ reports: [SyncReport], command: String, root: String, dryRun: Bool,
                            unresolvedConflict: (RecordID) -> ConflictKind?) -> TerminalText {
        var counts: [SyncCount: Int] = [:]
        // Each lookup reads the conflict store; the count key and the event both need it.
        var looked: [RecordID: ConflictKind?] = [:]
        func unresolved(_ id: RecordID) -> ConflictKind? {
            if let known = looked[id] { return known }
            let kind = unresolvedConflict(id)
            looked[id] = kind
            return kind
        }
        let phases: [Value] = reports.map { .map(phase($0, of: reports, unresolvedConflict: unresolved, counts: &counts)) }
        return text([
            "version": .integer(1),
            "command": .string(command),
            "collection": .string(root),
            "dryRun": .bool(dryRun),
            "phases": .array(phases),
            "counts": countFields(counts),
            "needsAttention": .bool(reports.contains { $0.needsAttention }),
        ])
    }

    /// One element of `phases` (see `syncReports`), its events counted in `counts`.
    static func phase(_ report: SyncReport, of reports: [SyncReport], unresolvedConflict: (RecordID) -> ConflictKind?,
                      counts: inout [SyncCount: Int]) -> Fields {
        let events: [Value] = report.events.map { event in
            let line = SyncCommandSupport.describe(event, path: "", would: "", command: report.command,
                                                   unresolvedConflict: unresolvedConflict)
            counts[line.count, default: 0] += 1
            return .map(syncEvent(event, action: line.action, unresolvedConflict: unresolvedConflict))
        }
        counts[.invalid, default: 0] += SyncCommandSupport.countedUnusableFiles(report, of: reports).count
            + report.unusableRemote.count
        var phase: Fields = [
            "command": .string(report.command.rawValue),
            "events": .array(events),
            "unusableFiles": unusableFiles(report.unusableFiles),
            "unusableRemote": unusableRemote(report.unusableRemote),
        ]
        if !report.deletedParents.isEmpty {
            phase["deletedParents"] = .array(report.deletedParents.map {
                .map(["id": .string($0.parent.rawValue), "remainingChildren": .integer(Int64($0.remainingChildren))])
            })
        }
        return phase
    }

    /// `counts` as the `counts` object: every bucket, zeros included.
    static func countFields(_ counts: [SyncCount: Int]) -> Value {
        var fields: Fields = [:]
        for count in SyncCount.allCases { fields[count.rawValue] = .integer(Int64(counts[count] ?? 0)) }
        return .map(fields)
    }

    /// One line of JSON Lines (`watch --json`): `"version": 1` first, the
    /// other keys sorted, no line break inside.
    static func line(_ fields: Fields) -> TerminalText {
        var rest = fields
        rest["version"] = nil
        let inline = CanonicalJSON.encodeInline(.map(rest))
        return TerminalText(json: rest.isEmpty ? #"{"version": 1}"# : #"{"version": 1, "# + String(inline.dropFirst()))
    }

    /// The paths of a both-modified conflict, twice: `conflictFields`, each in
    /// Firestore's dotted notation (`stats.rating`, `` `a.b` `` for a name
    /// with a dot), and `conflictPaths`, each as its list of names (outermost
    /// first), for scripts that would rather not parse the notation.
    static func conflictPaths(_ paths: [FieldPath], into fields: inout Fields) {
        fields["conflictFields"] = .array(paths.map { .string($0.description) })
        fields["conflictPaths"] = .array(paths.map { .array($0.segments.map(Value.string)) })
    }

    /// One event of `phases[].events`: `action` (from `SyncCommandSupport.describe`)
    /// and the fields that action carries.
    static func syncEvent(_ event: SyncEvent, action: String, unresolvedConflict: (RecordID) -> ConflictKind?) -> Fields {
        var fields: Fields = ["id": .string(event.id.rawValue), "file": .string(event.id.fileName), "action": .string(action)]
        func sides(_ state: SyncState) {
            let names = state.statusNames
            fields["local"] = names.local.map(Value.string) ?? .null
            fields["remote"] = names.remote.map(Value.string) ?? .null
        }
        switch event.kind {
        case .pulled(.conflict(let kind)), .conflict(let kind):
            sides(.conflict(kind))
            if case .bothModified(let paths) = kind, !paths.isEmpty { conflictPaths(paths, into: &fields) }
        case .remoteChangedSincePull:
            fields["unresolvedConflict"] = .bool(unresolvedConflict(event.id) != nil)
        case .invalidLocal(let diagnostics):
            sides(.invalidLocal(diagnostics))
            fields["problems"] = problems(diagnostics)
        case .invalidRemote(let diagnostics):
            sides(.invalidRemote(diagnostics))
            fields["problems"] = problems(diagnostics)
        case .rejected(let message):
            fields["message"] = .string(message)
        case .pulled(.leaveScope):
            sides(.leftScope)
        case .outsideScope:
            sides(.outsideScope)
        case .pulled, .pushed, .seeded, .changedDuringSync:
            break
        }
        return fields
    }

    // MARK: validate

    /// The `--json` document of `validate` (version 1):
    ///
    /// - `version`: 1.
    /// - `collection`: absolute path of the collection directory.
    /// - `files`: one object per file checked, in the order checked (named
    ///   files in command-line order, else every `*.json` file by name):
    ///   `file` (its path in the collection directory), `valid` (bool),
    ///   `problems` (every problem, as in `status --json`: `LINE:COLUMN:
    ///   message` for a syntax or value error, else the message; empty when valid).
    /// - `checked`: how many files were checked; `invalid`: how many have problems.
    ///
    /// Written one file at a time as the files are checked, so a million
    /// files never have a million reports in memory: the same bytes `text`
    /// writes for the whole document (`JSONOutputTests` compares them).
    struct ValidationWriter {
        let out: (TerminalText) -> Void
        private var pending: String?
        /// The collection directory, once `start` names it: `file` is the path below it.
        private var root = ""
        private(set) var invalid = 0

        init(out: @escaping (TerminalText) -> Void) {
            self.out = out
        }

        /// The lines before the first file: what is known once the files are listed.
        mutating func start(checked: Int, root: String) {
            self.root = root
            out(TerminalText(json: "{\n  \"version\": 1,\n  \"checked\": \(checked),\n  \"collection\": "
                + CanonicalJSON.encodeInline(.string(root)) + ",\n  \"files\": [" + (checked == 0 ? "]," : "")))
        }

        /// One file's entry, indented as an element of `files`; written when
        /// the next one comes (it needs a comma then) or at `finish`.
        mutating func add(_ report: ValidationReport) {
            if !report.diagnostics.isEmpty { invalid += 1 }
            if let pending { out(TerminalText(json: pending + ",")) }
            var fields: Fields = [
                // dune/reviews/r1.json, not r1.json: the same name in two folders is two records.
                "file": .string(PathDisplay.relative(report.path, to: root)),
                "valid": .bool(report.diagnostics.isEmpty),
                "problems": problems(report.diagnostics),
            ]
            if !report.warnings.isEmpty { fields["warnings"] = .array(report.warnings.map(Value.string)) }
            let entry = CanonicalJSON.encode(fields)
            pending = String(decoding: entry.dropLast(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .map { "    " + $0 }.joined(separator: "\n")
        }

        /// The last entry and the closing lines.
        mutating func finish() {
            if let pending { out(TerminalText(json: pending + "\n  ],")) }
            pending = nil
            out(TerminalText(json: "  \"invalid\": \(invalid)\n}"))
        }
    }
}
