import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `booksync diff --markdown`: the three versions of the records that differ,
/// one row per field, for a pull-request comment (escaped as `plan --markdown` is).
enum DiffMarkdown {
    /// A heading, a summary line and the table; invalid records and unusable
    /// files and documents are rows of their own, with their first problem.
    static func render(_ result: CollectionDiff, schema: (RecordID) -> RecordSchema?) -> String {
        let out = "### booksync diff\n\n" + summary(result) + "\n\n"
        guard !(result.records.isEmpty && result.unusableFiles.isEmpty && result.unusableRemote.isEmpty) else { return out }
        var table = MarkdownTable(columns: ["Record", "Field", "Change", "Base", "Local", "Remote"])
        for record in result.records {
            let problems = DiffCommand.problems(record.state)
            if let problem = problems.first {
                table.add([.text(record.id.rawValue), .note(""), .note(describe(record.state)), .text(problem.description)])
                continue
            }
            if record.fields.isEmpty {
                table.add([.text(record.id.rawValue), .note("no field differs"), .note(describe(record.state))])
            }
            for field in record.fields {
                table.add([
                    .text(record.id.rawValue), .text(PlanRenderer.fieldLabel(field.path, schema: schema(record.id))),
                    .note(DiffCommand.label(field.change)),
                ] + cells(field, record))
            }
        }
        for file in result.unusableFiles {
            table.add([.text(file.fileName), .note(""), .note("unusable file"), .text(file.message)])
        }
        for document in result.unusableRemote {
            table.add([.text(document.name), .note(""), .note("unusable document"), .text(document.message)])
        }
        return out + table.rendered()
    }

    /// "3 records differ: 1 changed locally, 1 changed remotely, 1 in conflict".
    static func summary(_ result: CollectionDiff) -> String {
        guard !result.records.isEmpty || !result.unusableFiles.isEmpty || !result.unusableRemote.isEmpty else { return "no differences" }
        var local = 0, remote = 0, both = 0, attention = 0
        for record in result.records {
            switch record.state {
            case .localChange: local += 1
            case .remoteChange, .leftScope: remote += 1
            case .converged, .mergeable: both += 1
            case .conflict, .invalidLocal, .invalidRemote: attention += 1
            case .clean, .outsideScope: break
            }
        }
        let parts = [(local, "changed locally"), (remote, "changed remotely"), (both, "changed on both sides"),
                     (attention, "in conflict or invalid"), (result.unusableFiles.count + result.unusableRemote.count, "unusable")]
            .filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return plural(result.records.count, "record") + " differ" + (result.records.count == 1 ? "s" : "") + ": " + parts.joined(separator: ", ")
    }

    /// The record's class in a few words; `DiffCommand.describe` adds the conflict's fields and the problem counts.
    static func describe(_ state: SyncState) -> String {
        switch state {
        case .clean: "clean"
        case .localChange(let kind): "\(kind.rawValue) locally"
        case .remoteChange(let kind): "\(kind.rawValue) remotely"
        case .converged: "changed the same way on both sides"
        case .mergeable: "changed on both sides, mergeable"
        case .conflict: "conflict"
        case .invalidLocal: "invalid file"
        case .invalidRemote: "invalid remote document"
        case .leftScope: "left the scope remotely"
        case .outsideScope: "new locally, outside the scope"
        }
    }

    /// Base, local and remote, windowed together; a side without the record says so.
    private static func cells(_ field: FieldDifference, _ record: RecordDiff) -> [MarkdownTable.Cell] {
        let windowed = MarkdownText.window([field.base, field.local, field.remote], absent: "field absent")
        return zip(windowed, [record.inBase, record.inLocal, record.inRemote]).map { $1 ? $0 : .note("record absent") }
    }
}
