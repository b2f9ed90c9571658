import BooksyncCore

/// A pull through the change query (config `"changeField"`, a mark in the
/// base): the changed documents come with their bodies, so each answer is
/// classified, planned and applied as it arrives, and its bodies dropped,
/// as a first pull does. A pull of any number of changes holds one answer.
extension SyncEngine {
    /// What is left once the change query's answers are applied.
    enum ChangesPulled {
        /// Nothing: the query was complete, and the pull is done.
        case done
        /// Every name must be listed, for this reason; the records the
        /// query's answers settled (`handled`, sorted) are left out of it.
        case listEveryName(FullListingReason, handled: PackedRecordIDs)
    }

    /// Reads the documents changed since `mark` and applies them answer by
    /// answer (planned only, in a dry run). A change query finds no
    /// deletion, so no answer has anything for the mass-delete guard.
    ///
    /// The count (`RemoteChanges.count`) says whether the query was complete
    /// only once it has ended: when it does not add up, the changes found
    /// were real and stay applied, and the rest is found by listing every
    /// name (`.listEveryName`), as before. A mark after the server's read
    /// time is refused at the first answer, before anything is applied.
    mutating func pullChanges(since mark: ChangeMark, applied: ProgressCounter) async throws(BooksyncError) -> ChangesPulled {
        let counter = ProgressCounter(phase: "reading changes", total: nil, report: progress)
        let handoff = AnswerHandoff<RemoteSnapshot>()
        let (remote, counting) = (self.remote, !options.round.changesWithoutCount)
        let prefetched = options.round.prefetchedChanges.flatMap { $0.mark == mark ? $0.changes : nil }
        let reader = Task { () async -> Result<RemoteChanges?, RemoteError> in
            let result: Result<RemoteChanges?, RemoteError>
            if var prefetched {
                await handoff.put(RemoteSnapshot(listing: RemoteListing(revisions: RemoteRevisions(prefetched.documents.mapValues(\.revision)),
                                                                        unusable: prefetched.unusable, readTime: prefetched.readTime),
                                                 bodies: prefetched.documents))
                prefetched.documents = [:]
                result = .success(prefetched)
            } else {
                do throws(RemoteError) {
                    result = .success(try await remote.changes(since: mark, counting: counting,
                                                               batch: { await handoff.put(RemoteSnapshot(listing: $0, bodies: $1)) },
                                                               progress: { counter.add($0) }))
                } catch {
                    result = .failure(error)
                }
            }
            await handoff.finish()
            return result
        }
        var failure: BooksyncError?
        var refused: FullListingReason?
        var handled = PackedRecordIDs()
        var newToBase = 0
        var firstAnswer = true
        var gitChecked = false
        var marking = FirstPullMark(field: mark.field)
        let manifest = self.manifest
        await withTaskCancellationHandler {
            while failure == nil, refused == nil, let answer = await handoff.take() {
                if firstAnswer {
                    firstAnswer = false
                    if let reason = Self.markAfterReadTime(mark, readTime: answer.listing.readTime) {
                        refused = reason
                        continue
                    }
                }
                let ids = Array(answer.listing.revisions.keys)
                for id in ids {
                    if manifest.entries[id] == nil { newToBase += 1 }
                    handled.append(id)
                }
                let classified = gather.classify(remote: answer, only: ids)
                var plan = SyncPlanner.pull(classified.records, choice: options.conflictChoice, chunkSize: Self.pullChunk)
                if options.dryRun {
                    report.events += plan.takeReport()
                    continue
                }
                do throws(BooksyncError) {
                    if !gitChecked {
                        try await requireGitQuiet()
                        gitChecked = true
                    }
                    var fetchedLater: [RecordID: String] = [:]
                    report.events += try await applyPullPlan(&plan, snapshot: answer, localReads: classified.localReads, applied: applied,
                                                             fetchedLater: &fetchedLater)
                    marking.add(answer, base: base.manifest)
                } catch {
                    failure = error
                }
            }
        } onCancel: {
            reader.cancel()
        }
        if failure != nil || refused != nil { reader.cancel() }
        // The reader may wait to hand on an answer nobody takes now.
        await handoff.finish()
        // Always awaited, also after a failure cancelled it: nothing outlives the command.
        let read = await reader.value
        if failure == nil, refused == nil, case .failure(let error) = read { failure = .remoteFailure(error) }
        if failure == nil, Task.isCancelled { failure = .interrupted }
        if let failure {
            // Nothing was applied before git was found quiet: nothing to save
            // (and a base someone else moved is not written over).
            if options.dryRun || !gitChecked { throw failure }
            try base.saveAndThrow(failure)
        }
        handled.sort()
        if let refused { return .listEveryName(refused, handled: handled) }
        guard case .success(let summary?) = read else { return .listEveryName(.noChangeQuery, handled: handled) }
        if firstAnswer, let reason = Self.markAfterReadTime(mark, readTime: summary.readTime) {
            return .listEveryName(reason, handled: handled)
        }
        let accounted = manifest.entries.count + newToBase + summary.unusable.count
        if let counted = summary.count, accounted != counted {
            return .listEveryName(.countDiffers(field: mark.field, accounted: accounted, counted: counted), handled: handled)
        }
        report.unusableRemote = summary.unusable
        report.remoteRead = .changes(since: mark, documents: handled.count, counted: summary.count != nil)
        // A change query that found nothing leaves the mark where it is: the
        // manifest is not rewritten by a pull that changed nothing.
        if !options.dryRun, !handled.isEmpty {
            base.setChangeMark(marking.safe && summary.unusable.isEmpty
                ? ChangeMark.after(field: mark.field, scope: rules.scope, readTime: marking.readTime, unrecorded: marking.unrecorded) : nil)
        }
        return .done
    }

    /// Why a mark after the server's read time is refused: it cannot come
    /// from a sync, and a damaged or forged manifest (a cloned collection is
    /// untrusted) must not hide changes. nil for a mark that can be trusted.
    static func markAfterReadTime(_ mark: ChangeMark, readTime: String?) -> FullListingReason? {
        guard let readTime = readTime.flatMap(Timestamp.init(serverTime:)), mark.time > readTime else { return nil }
        return .markAfterReadTime(mark.time.rfc3339)
    }
}

/// Hands a change query's answers from the task reading them to the pull
/// applying them, one at a time: `put` waits while the answer before is not
/// yet taken, so the reader is at most one answer ahead, and a pull that
/// applies more slowly than it reads holds a few answers, not all of them.
/// `finish` ends it, from either side: the reader's end, or the pull
/// stopping (a `put` waiting then returns, and its answer is dropped).
actor AnswerHandoff<Element: Sendable> {
    private var waiting: Element?
    private var finished = false
    private var putter: CheckedContinuation<Void, Never>?
    private var taker: CheckedContinuation<Element?, Never>?

    /// Hands on `element` once the one before was taken.
    func put(_ element: Element) async {
        while waiting != nil, !finished {
            await withCheckedContinuation { putter = $0 }
        }
        guard !finished else { return }
        if let taker {
            self.taker = nil
            taker.resume(returning: element)
        } else {
            waiting = element
        }
    }

    /// The next element; nil once finished and none is waiting.
    func take() async -> Element? {
        if let element = waiting {
            waiting = nil
            putter?.resume()
            putter = nil
            return element
        }
        if finished { return nil }
        return await withCheckedContinuation { taker = $0 }
    }

    /// No more elements: a waiting `take` gets nil, a waiting `put` returns.
    func finish() {
        finished = true
        taker?.resume(returning: nil)
        taker = nil
        putter?.resume()
        putter = nil
    }
}
