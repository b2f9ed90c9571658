import BooksyncCore

extension SyncGather {
    /// Plans a push record by record (the manual's ThreeWaySync article, `push` column): the
    /// records that differ from the base, in id order, each classified against
    /// the base alone and added to a packed plan whose writes are cut into
    /// chunks of `chunkSize` (one request each).
    func planPush(chunkSize: Int) -> PushPlan {
        var plan = PushPlan(chunkSize: chunkSize)
        DifferingRecords(scan: scan, manifest: manifest).walk { id in
            let planned = SyncPlanner.push(classifiedRecord(id))
            // Adopting and forgetting are settled against a remote; push reads
            // none before writing, so its plan holds writes only.
            if case .step(let step) = planned, !step.sendsWrite { return true }
            plan.add(planned)
            return true
        }
        plan.finish()
        return plan
    }
}

extension PushStep {
    /// True for the steps that send a write (adopting and forgetting are settled without one).
    var sendsWrite: Bool {
        switch action {
        case .create, .update, .delete, .overwrite, .remove: true
        case .adopt, .forget: false
        }
    }
}
