import BooksyncCore

/// What a push will do, planned record by record in id order without a list
/// of steps: one event per record it acts on or reports, which is both the
/// dry run's report and, for a real push, the plan the chunks send (a planned
/// write is its `.pushed` event) and the report once the answers are in (a
/// write the server accepted keeps its event; any other outcome replaces it).
struct PushSurvey {
    /// The plan's events (invalid files) and one `.pushed` event per write, in id order.
    var events = SyncEvents()
    /// The events of each chunk of writes, as index ranges of `events`.
    var chunks: [Range<Int>] = []
    /// Writes to send.
    var writes = 0
    /// Writes that delete a document.
    var deletes = 0

    /// The write planned by the event at `index`; nil for a reported record.
    func write(at index: Int) -> PushStep? {
        let event = events[index]
        guard case .pushed(let action) = event.kind else { return nil }
        return PushStep(id: event.id, action: action)
    }
}

extension CollectionDirectory {
    /// Plans the push of `candidates` record by record (<doc:ThreeWaySync>, `push`
    /// column), cutting the writes into chunks of `chunkSize`.
    func surveyPush(_ candidates: DifferingRecords, scan: LocalScan, manifest: Manifest, chunkSize: Int) -> PushSurvey {
        var survey = PushSurvey()
        var chunkStart = 0, inChunk = 0
        candidates.walk { id in
            var unused: [RecordID: LocalRead] = [:]
            var plan = PushPlan()
            SyncPlanner.push(classifiedRecord(id, scan: scan, manifest: manifest, remote: nil, localReads: &unused), into: &plan)
            survey.events += plan.events
            for step in plan.steps where step.sendsWrite {
                survey.events.append(step.dryRunEvent)
                survey.writes += 1
                if step.action.isDelete { survey.deletes += 1 }
                inChunk += 1
                if inChunk == chunkSize {
                    survey.chunks.append(chunkStart..<survey.events.count)
                    chunkStart = survey.events.count
                    inChunk = 0
                }
            }
            return true
        }
        if inChunk > 0 { survey.chunks.append(chunkStart..<survey.events.count) }
        return survey
    }
}
