import BooksyncCore
@_spi(Remote) import BooksyncKit

/// What `booksync watch` prints: what it will cost at start, each round's
/// lines as pull and push print them, failures, and on stop a summary of
/// what it did and spent; or all of it as JSON Lines with `--json`.
///
/// Every line is flushed at once: a watch's output is read while it runs.
final class WatchPrinter {
    private let context: CommandContext
    private let collection: CollectionDirectory
    private let json: Bool
    private var counts: [SyncCount: Int] = [:]
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    /// Whether the conflict hint was shown (once per watch is enough).
    private var hinted = false

    init(context: CommandContext, collection: CollectionDirectory, json: Bool) {
        self.context = context
        self.collection = collection
        self.json = json
        start = clock.now
    }

    /// The start: what is watched, and what polling costs.
    func started(remote: FirestoreRemote, settings: LiveSyncSchedule.Settings, seconds: Double, baseCount: Int) {
        // One query (and one count) per scope: the collection and each subcollection group.
        let scopes = 1 + collection.rules.subcollections.entries.count
        let onEmulator = remote.identity?.isEmulator == true
        if json {
            emit(["type": .string("start"), "collection": .string(collection.paths.root), "remote": .string(collection.remote.name),
                  "pollSeconds": seconds > 0 ? .double(seconds) : .null, "countEveryPolls": .integer(Int64(settings.countEvery)),
                  "estimatedReadsPerIdleHour": Self.idleReadsPerHour(seconds: seconds, countEvery: settings.countEvery, baseCount: baseCount,
                                                                      changeField: collection.rules.changeField != nil, scopes: scopes)
                      .map { .integer(Int64($0)) } ?? .null])
            context.console.flush()
            return
        }
        guard !context.quiet else { return }
        context.console.err("booksync: watching \(context.shownPath(collection.paths.root)) (Ctrl-C stops); saves are pushed 0.2 s after the last write")
        context.console.err("booksync: \(Self.pollCost(seconds: seconds, countEvery: settings.countEvery, baseCount: baseCount, changeField: collection.rules.changeField, scopes: scopes, emulator: onEmulator))")
        context.console.flush()
    }

    /// The start of `watch --no-sync`.
    func startedForStatus(socket: String) {
        if json {
            emit(["type": .string("start"), "collection": .string(collection.paths.root), "sync": .bool(false), "socket": .string(socket)])
        } else if !context.quiet {
            context.console.err("booksync: watching \(context.shownPath(collection.paths.root)) for status (Ctrl-C stops); "
                                + "'booksync status --offline' now reads only what changed")
        }
        context.console.flush()
    }

    /// The end of `watch --no-sync`.
    func stoppedForStatus() {
        let elapsed = clock.now - start
        if json {
            emit(["type": .string("stop"), "seconds": .double(Double(elapsed.components.seconds))])
        } else if !context.quiet {
            context.console.out("watched for \(ProgressMeter.duration(elapsed))")
        }
        context.console.flush()
    }

    /// Why status cannot ask this watch (another watch serves the collection, or the socket's folder is not private).
    func notServing(_ problem: String) {
        if json {
            emit(["type": .string("notice"), "message": .string("status cannot ask this watch: \(problem)")])
        } else if context.verbose {
            context.console.err("booksync: status cannot ask this watch: \(problem)")
        }
        context.console.flush()
    }

    /// What polling costs, as the start line says it.
    static func pollCost(seconds: Double, countEvery: Int, baseCount: Int, changeField: String?, scopes: Int, emulator: Bool) -> String {
        guard seconds > 0 else { return "not polling the remote (--interval 0): its changes arrive with the next pull" }
        let every = "every \(seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)) s"
        let free = emulator ? " (the emulator bills nothing)" : ""
        let perHour = idleReadsPerHour(seconds: seconds, countEvery: countEvery, baseCount: baseCount, changeField: changeField != nil,
                                       scopes: scopes) ?? 0
        guard let changeField else {
            return "polling \(every) lists every name: about \(grouped(max(1, baseCount))) billed reads a poll at the last known size, "
                + "\(grouped(perHour)) an hour\(free)"
        }
        let countReads = countCost(baseCount: baseCount, scopes: scopes)
        let queries = scopes == 1 ? "1 billed read" : "\(scopes) billed reads (one per collection and subcollection group)"
        return "polling \(every) for documents whose '\(changeField)' changed: \(queries) a poll while nothing changes, "
            + "1 per changed document, and a count every \(countEvery) polls (\(grouped(countReads)) read\(countReads == 1 ? "" : "s")); "
            + "about \(grouped(perHour)) reads an idle hour\(free)"
    }

    /// The billed reads of an hour in which nothing changes; nil when not polling.
    static func idleReadsPerHour(seconds: Double, countEvery: Int, baseCount: Int, changeField: Bool, scopes: Int) -> Int? {
        guard seconds > 0 else { return nil }
        let polls = Int((3600 / seconds).rounded(.down))
        guard changeField else { return polls * max(scopes, baseCount) }
        return polls * scopes + polls / max(1, countEvery) * countCost(baseCount: baseCount, scopes: scopes)
    }

    /// The reads of one count: one per 1,000 documents counted, at least one per scope.
    static func countCost(baseCount: Int, scopes: Int) -> Int {
        (baseCount + 999) / 1000 + max(0, scopes - 1) + (baseCount == 0 ? 1 : 0)
    }

    /// One event of the live sync.
    func show(_ event: LiveSync.Event) {
        switch event {
        case .round(let report):
            if json {
                var fields = JSONDocuments.phase(report, of: [report], unresolvedConflict: collection.unresolvedConflicts(), counts: &counts)
                fields["type"] = .string("round")
                emit(fields)
            } else {
                SyncCommandSupport.renderLines([report], context: context, root: collection.paths.root,
                                               conflicts: collection.relativeConflictsFolder, live: true,
                                               unresolvedConflict: collection.unresolvedConflicts(), counts: &counts)
                let stored = report.command == .pull && report.events.contains { if case .conflict = $0.kind { true } else { false } }
                if stored, !hinted, !context.quiet {
                    hinted = true
                    context.console.err("booksync: hint: \(SyncCommandSupport.conflictHint)")
                }
            }
        case .waitingForGit(let activity):
            if json {
                emit(["type": .string("waiting"), "reason": .string(activity)])
            } else {
                context.console.err("booksync: waiting: \(activity); the watch syncs again when git is done")
            }
        case .lookingAtEverything(let reason):
            if json {
                emit(["type": .string("rescan"), "reason": .string(reason)])
            } else if context.verbose {
                context.console.err("booksync: looking at every file: \(reason)")
            }
        case .failed(let phase, let error, let retrying):
            if json {
                emit(["type": .string("error"), "command": .string(phase.rawValue), "message": .string(error.description), "retrying": .bool(retrying)])
            } else {
                context.console.err("booksync: \(phase.rawValue) failed: \(error.description)\(retrying ? " (trying again)" : "")")
            }
        }
        context.console.flush()
    }

    /// The summary: how long, what was done, what it cost.
    func stopped(usage: FirestoreUsage.Totals) {
        let elapsed = clock.now - start
        // Billed writes: the creates, updates and deletes the server accepted, which is what "pushed" counts.
        let writes = counts[.pushed] ?? 0
        if json {
            emit(["type": .string("stop"), "seconds": .double(Double(elapsed.components.seconds)), "counts": JSONDocuments.countFields(counts),
                  "requests": .integer(Int64(usage.requests)), "documentsRead": .integer(Int64(usage.documents)),
                  "billedReads": .integer(Int64(usage.billedReads)), "writes": .integer(Int64(writes))])
        } else {
            let parts = SyncCommandSupport.summaryParts(counts)
            context.console.out("watched for \(ProgressMeter.duration(elapsed)): \(parts.isEmpty ? "nothing to do" : parts.joined(separator: ", ")); "
                                + "\(RemoteUsageLine.describe(usage)), \(grouped(writes)) write\(writes == 1 ? "" : "s")")
        }
        context.console.flush()
    }

    private func emit(_ fields: Fields) {
        var fields = fields
        fields["time"] = .string(Timestamp(microsecondsSinceEpoch: WallClock.nowNanoseconds() / 1000).rfc3339)
        context.console.out(JSONDocuments.line(fields))
    }
}
