/// What a scan found in one record file.
public enum LocalFileState: Sendable, Equatable {
    /// A valid record with this content hash.
    case valid(hash: String)
    /// A file that cannot be used as a record, with every reason.
    case invalid([RecordDiagnostic])
}

/// How a record's local file differs from the base (the last sync).
public enum LocalChange: String, Sendable, Equatable, CaseIterable {
    case added, modified, deleted, invalid
}

/// One record whose local file differs from the base.
public struct LocalChangeEntry: Sendable, Equatable {
    public let id: RecordID
    public let change: LocalChange
    /// Why the file is invalid; empty for other changes.
    public let diagnostics: [RecordDiagnostic]

    public init(id: RecordID, change: LocalChange, diagnostics: [RecordDiagnostic] = []) {
        self.id = id
        self.change = change
        self.diagnostics = diagnostics
    }
}

/// The local half of the three-way comparison: files against the base.
public enum LocalComparison {
    /// Every record whose file differs from the base, sorted by id. Records whose
    /// file matches the base hash are clean and left out.
    public static func changes(files: [RecordID: LocalFileState], base: [RecordID: BaseEntry]) -> [LocalChangeEntry] {
        var result: [LocalChangeEntry] = []
        for (id, state) in files {
            switch (state, base[id]) {
            case (.invalid(let diagnostics), _):
                result.append(LocalChangeEntry(id: id, change: .invalid, diagnostics: diagnostics))
            case (.valid, nil):
                result.append(LocalChangeEntry(id: id, change: .added))
            case (.valid(let hash), let entry?):
                if hash != entry.hash { result.append(LocalChangeEntry(id: id, change: .modified)) }
            }
        }
        for id in base.keys where files[id] == nil {
            result.append(LocalChangeEntry(id: id, change: .deleted))
        }
        return result.sorted { $0.id < $1.id }
    }
}
