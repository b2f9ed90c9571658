import BooksyncCore

/// A `:batchWrite` that Firestore refuses as a whole for what one of its
/// writes holds, narrowed down to that write.
extension FirestoreRemote {
    /// `batchWrite`, and when Firestore refuses the request as a whole (400
    /// INVALID_ARGUMENT), its halves on their own, and so on down to single
    /// writes. `:batchWrite` reports most refusals per write, but some only
    /// for the whole request, without naming the document: a field path past
    /// 1,500 bytes is "Property m contains an invalid nested entity" on the
    /// emulator, and nothing of the batch is written. Narrowed down, every
    /// other write of the batch is written, and a write refused alone is
    /// rejected, as a refusal reported per write is: one record the server
    /// will not take cannot block every push, and it is named.
    ///
    /// Only INVALID_ARGUMENT is narrowed down: it says the request's content
    /// is wrong, which a smaller request may not be. Every other error ends
    /// the batch as before (an unreachable server, an expired token). The
    /// halves go one after the other, so a push never has more requests in
    /// flight than its chunks. Bounded: each refused request is split in
    /// two, so a batch of N writes takes at most 2·N − 1 requests (when every
    /// write is refused), and one bad write among 500 about 19. Nothing of a
    /// refused request is written, and every write keeps its precondition,
    /// so sending one again is as safe as sending it the first time.
    func batchWriteNarrowing(_ batch: [EncodedWrite]) async throws(RemoteError) -> [RecordID: WriteOutcome] {
        do {
            return try await batchWrite(batch)
        } catch {
            guard error.refusesContent else { throw error }
            guard batch.count > 1 else { return [batch[0].write.id: .rejected(Self.refusal(error))] }
            let half = batch.count / 2
            var outcomes = try await batchWriteNarrowing(Array(batch[..<half]))
            let second = try await batchWriteNarrowing(Array(batch[half...]))
            outcomes.merge(second) { first, _ in first }
            return outcomes
        }
    }

    /// The rejection of a write that Firestore refused alone, in its words.
    private static func refusal(_ error: RemoteError) -> String {
        guard case .rejected(_, let status, let code, let message) = error else { return error.description }
        return "Firestore refused this record (\(status) \(code))" + (message.isEmpty ? "" : ": " + message)
    }
}

extension RemoteError {
    /// Whether Firestore refused a request for what it holds (400
    /// INVALID_ARGUMENT), which a request holding less may not be.
    var refusesContent: Bool {
        guard case .rejected(_, let status, let code, _) = self else { return false }
        return status == 400 && GRPCCode(name: code) == .invalidArgument
    }
}
