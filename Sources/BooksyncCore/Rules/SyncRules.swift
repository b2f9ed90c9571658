/// What a scan found in one record file.
package enum LocalFileState: Sendable, Equatable {
    /// A valid record with this content hash.
    case valid(hash: ContentHash)
    /// A file that cannot be used as a record, with every reason.
    case invalid([RecordDiagnostic])
}

/// The local file of a record, as far as the sync rules care.
package enum LocalVersion: Sendable, Equatable {
    /// No record file.
    case absent
    /// A file that cannot be used as a record, with every reason.
    case invalid([RecordDiagnostic])
    /// A valid record file with this content hash.
    case present(hash: ContentHash)
}

/// The remote document of a record, as far as the sync rules care.
package enum RemoteVersion: Sendable, Equatable {
    /// `--offline`: the remote was not asked, so it counts as unchanged.
    case notChecked
    /// No document with this id.
    case absent
    /// `hash` is the content hash of the document as a record file; nil when
    /// only its revision was listed (enough unless the local side changed too).
    case present(revision: String, hash: ContentHash?)
    /// A document that cannot become a record file (see the diagnostics).
    case invalid(revision: String, [RecordDiagnostic])
    /// A document that exists but no longer matches the collection's scope
    /// (config `"scope"`): the scoped listing left it out, a read by name found it.
    case outsideScope
}

/// How one side changed since the base.
public enum ChangeKind: String, Sendable, Equatable, CaseIterable {
    /// Created since the base, changed since the base, removed since the base.
    case added, modified, deleted
}

/// Why a record is a conflict.
public enum ConflictKind: Sendable, Equatable {
    /// Both sides modified the values at these paths differently (sorted;
    /// empty when only the sides are known, not the merge).
    case bothModified(fields: [FieldPath])
    /// Both sides created the record with different content.
    case bothAdded
    /// Modified here, deleted remotely.
    case modifiedLocallyDeletedRemotely
    /// Deleted here, modified remotely.
    case deletedLocallyModifiedRemotely
    /// Both sides changed but the remote content was not fetched; treated as a
    /// conflict so nothing is overwritten on a guess.
    case remoteContentUnknown
}

/// The class of a record in the three-way comparison (the manual's ThreeWaySync article).
public enum SyncState: Sendable, Equatable {
    /// Neither side changed since the base.
    case clean
    /// Only the record file changed: `push` sends it.
    case localChange(ChangeKind)
    /// Only the document changed: `pull` applies it.
    case remoteChange(ChangeKind)
    /// Both sides changed to the same content (or both deleted).
    case converged
    /// Both sides modified different fields; `merged` is the field-level merge.
    case mergeable(merged: Fields)
    /// Both sides changed incompatibly: the user must choose.
    case conflict(ConflictKind)
    /// The local file cannot be used; it is never sent and never overwritten.
    case invalidLocal([RecordDiagnostic])
    /// The remote document cannot become a record file; it is never pulled.
    case invalidRemote([RecordDiagnostic])
    /// The document no longer matches the scope (config `"scope"`): pull
    /// drops the base entry and keeps the file; nothing is deleted on either side.
    case leftScope
    /// A new local record that does not match the scope: never pushed (the
    /// document would not be in the scope), shown apart by `status`.
    case outsideScope
}

/// The three-way sync rules: one exhaustive switch that mirrors the manual's ThreeWaySync article.
package enum SyncRules {
    /// Classifies a record from its base entry and both sides. `merge` computes
    /// the field-level merge on demand (it needs the base, local and remote
    /// fields, which only the caller can load); it is only called when both
    /// sides modified the record to different content. `localInScope` tells
    /// whether the local record matches the scope; it is only asked about a
    /// record added locally that the remote does not have.
    package static func classify(
        base: BaseEntry?, local: LocalVersion, remote: RemoteVersion,
        localInScope: () -> Bool = { true },
        merge: () -> FieldMerge.Outcome?
    ) -> SyncState {
        if case .invalid(let diagnostics) = local { return .invalidLocal(diagnostics) }
        let remoteSide: Side
        switch remote {
        case .outsideScope:
            // Left the scope: whatever the file holds stays, the base lets go;
            // without a base, a file of a document outside the scope stays local.
            if base != nil { return .leftScope }
            return local == .absent ? .clean : .outsideScope
        case .invalid(let revision, let diagnostics):
            // An invalid document the base already knows at this revision has not changed.
            if base?.revision == revision { remoteSide = .unchanged } else { return .invalidRemote(diagnostics) }
        case .notChecked:
            remoteSide = base == nil ? .none : .unchanged
        case .absent:
            remoteSide = base == nil ? .none : .deleted
        case .present(let revision, let hash):
            if let base { remoteSide = base.revision == revision ? .unchanged : .changed(hash) } else { remoteSide = .changed(hash) }
        }
        let localSide: Side
        switch local {
        case .invalid: return .invalidLocal([])  // handled above; kept for exhaustiveness
        case .absent: localSide = base == nil ? .none : .deleted
        case .present(let hash):
            if let base { localSide = base.hash == hash ? .unchanged : .changed(hash) } else { localSide = .changed(hash) }
        }

        let isNew = base == nil
        switch (localSide, remoteSide) {
        // same | same
        case (.unchanged, .unchanged), (.none, .none), (.unchanged, .none), (.none, .unchanged):
            return .clean
        // added/modified/deleted | same; a new record outside the scope stays local
        case (.changed, .unchanged), (.changed, .none):
            if isNew, !localInScope() { return .outsideScope }
            return .localChange(isNew ? .added : .modified)
        case (.deleted, .unchanged), (.deleted, .none):
            return .localChange(.deleted)
        // same | added/modified/deleted
        case (.unchanged, .changed), (.none, .changed):
            return .remoteChange(isNew ? .added : .modified)
        case (.unchanged, .deleted), (.none, .deleted):
            return .remoteChange(.deleted)
        // changed | changed, same content
        case (.deleted, .deleted):
            return .converged
        case (.changed(let localHash), .changed(let remoteHash)):
            guard let remoteHash else { return .conflict(.remoteContentUnknown) }
            if localHash == remoteHash { return .converged }
            // added | added, different content
            if isNew { return .conflict(.bothAdded) }
            // modified | modified: field by field
            switch merge() {
            case .merged(let fields)?: return .mergeable(merged: fields)
            case .conflicts(let fields)?: return .conflict(.bothModified(fields: fields))
            case nil: return .conflict(.remoteContentUnknown)
            }
        // modified | deleted, and the reverse
        case (.changed, .deleted):
            return .conflict(.modifiedLocallyDeletedRemotely)
        case (.deleted, .changed):
            return .conflict(.deletedLocallyModifiedRemotely)
        }
    }

    /// One side relative to the base.
    private enum Side {
        /// No base and nothing on this side.
        case none
        case unchanged
        /// Added (no base) or modified; the content hash when known.
        case changed(ContentHash?)
        case deleted
    }
}
