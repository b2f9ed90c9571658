import BooksyncCore

/// A write request that Firestore refuses as a whole for what one of its
/// writes holds, narrowed down to that write (or, for a commit, reported).
extension FirestoreRemote {
    /// `batchWrite`, and when Firestore refuses the request as a whole for
    /// what it holds, its halves on their own, and so on down to single
    /// writes. `:batchWrite` reports most refusals per write, but some only
    /// for the whole request (400 INVALID_ARGUMENT), without naming the
    /// document: a field path past 1,500 bytes is "Property m contains an
    /// invalid nested entity" on the emulator, and nothing of the batch is
    /// written. Narrowed down, every other write of the batch is written, and
    /// a write refused alone is rejected, as a refusal reported per write is:
    /// one record the server will not take cannot block every push, and it
    /// is named.
    ///
    /// Only a refusal of the content is narrowed down: INVALID_ARGUMENT also
    /// refuses requests whatever they hold (the emulator answers a token it
    /// cannot read so), which no record causes. An empty commit tells them
    /// apart: refused too, the request is at fault, and its error ends the
    /// batch, as does every other error (an unreachable server, an expired
    /// token). The halves go one after the other, so a push never has more
    /// requests in flight than its chunks. Bounded: that check and each
    /// refused request split in two make at most 2·N requests for a batch
    /// of N writes (when every write is refused), and about 20 for one bad
    /// write among 500. Nothing of a refused request is written, and every
    /// write keeps its precondition, so sending one again is as safe as
    /// sending it the first time.
    func batchWriteNarrowing(_ batch: [EncodedWrite]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        do {
            return try await batchWrite(batch)
        } catch {
            guard error.refusesContent, await takesAnEmptyCommit() else { throw error }
            return try await narrowed(batch, refusal: error)
        }
    }

    /// `commit`, and when Firestore refuses it for what one of its writes
    /// holds (see `batchWriteNarrowing`), every write not written, with
    /// Firestore's words: a commit is all or nothing, and Firestore's commit
    /// has no mode that checks writes without applying them, so the refused
    /// one cannot be found without writing the others. Written without
    /// `--atomic`, the others are written and that one rejected by name.
    func commitReportingRefusal(_ batch: [EncodedWrite]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        do {
            return try await commit(batch)
        } catch {
            guard error.refusesContent, await takesAnEmptyCommit() else { throw error }
            let outcome = WriteOutcome.rejected("not written: Firestore refused the --atomic commit for one of its records, without naming it; "
                + "push without --atomic to have that record named and the others written. Firestore said: " + Self.words(error))
            return Dictionary(batch.map { ($0.write.id, outcome) }) { first, _ in first }
        }
    }

    /// `batch`, refused whole with `refusal`, sent again in halves.
    private func narrowed(_ batch: [EncodedWrite], refusal: RemoteError) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        guard batch.count > 1 else { return [batch[0].write.id: .rejected("Firestore refused this record: " + Self.words(refusal))] }
        let half = batch.count / 2
        var outcomes = try await sentOrNarrowed(Array(batch[..<half]))
        outcomes.merge(try await sentOrNarrowed(Array(batch[half...]))) { first, _ in first }
        return outcomes
    }

    private func sentOrNarrowed(_ batch: [EncodedWrite]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        do {
            return try await batchWrite(batch)
        } catch {
            guard error.refusesContent else { throw error }
            return try await narrowed(batch, refusal: error)
        }
    }

    /// Whether Firestore takes a commit of no writes, which writes nothing
    /// and costs nothing: what a refused request held was at fault, not the
    /// request itself (its target, its token).
    private func takesAnEmptyCommit() async -> Bool {
        let request = HTTPRequest(method: "POST", url: endpoint.baseURL + URLPath.encode(documentsRoot) + ":commit", body: Array(#"{"writes": []}"#.utf8))
        do {
            _ = try await client.send(request, during: "check that \(target.collectionPath) takes a commit")
            return true
        } catch {
            return false
        }
    }

    /// A refusal in Firestore's words: `400 INVALID_ARGUMENT: message`.
    private static func words(_ error: RemoteError) -> String {
        guard case .rejected(_, let status, let code, let message) = error else { return error.description }
        return "\(status) \(code)" + (message.isEmpty ? "" : ": " + message)
    }
}

extension RemoteError {
    /// Whether Firestore refused a request as invalid (400
    /// INVALID_ARGUMENT): for what it holds, which a request holding less
    /// may not be, or for what it is (`takesAnEmptyCommit` tells which).
    var refusesContent: Bool {
        guard case .rejected(_, let status, let code, _) = self else { return false }
        return status == 400 && GRPCCode(name: code) == .invalidArgument
    }
}
