import BooksyncCore
@_spi(Remote) import BooksyncKit

/// How `booksync plan` shows a plan: lines for a terminal, or Markdown for a
/// pull-request comment (one row per changed field, the manual's ReviewingChanges article).
enum PlanRenderer {
    /// The plan as lines: each write and its field changes, the held records, the summary.
    static func lines(_ plan: SavedPlan, context: CommandContext, root: String) -> [TerminalText] {
        var lines: [TerminalText] = []
        for write in plan.writes {
            let action = write.action.rawValue
            lines.append("\(action + String(repeating: " ", count: max(1, 8 - action.count)))\(context.shownPath(root + "/" + write.id.fileName))")
            for change in write.changes {
                lines.append("    \(name: change.path.description): \(show(change.before)) -> \(show(change.after))")
            }
        }
        for held in plan.held {
            lines.append("held    \(context.shownPath(root + "/" + held.id.fileName)): \(held.reason)")
        }
        lines.append("\(summary(plan))")
        return lines
    }

    /// The plan as a Markdown comment: a heading with the target, the scope
    /// it was made under (if any), the summary, a table of changed fields,
    /// and one of held records.
    /// - Parameter schema: The schema of a record's fields (nil: none declared).
    static func markdown(_ plan: SavedPlan, schema: (RecordID) -> RecordSchema?) -> String {
        var out = "### booksync plan for \(MarkdownText.escape(targetName(plan)))\n\n"
        if let scope = plan.scope { out += "Within the collection's scope: \(MarkdownText.escape(scope))\n\n" }
        out += summary(plan) + "\n\n"
        if !plan.writes.isEmpty {
            var table = MarkdownTable(columns: ["Record", "Action", "Field", "Before", "After"])
            for write in plan.writes {
                if write.changes.isEmpty {
                    table.add([.text(write.id.rawValue), .note(write.action.rawValue), .note("no field changes")])
                }
                for change in write.changes {
                    table.add([.text(write.id.rawValue), .note(write.action.rawValue), .text(fieldLabel(change.path, schema: schema(write.id)))]
                              + MarkdownText.window([change.before, change.after]))
                }
            }
            out += table.rendered() + "\n"
        }
        if !plan.held.isEmpty {
            var table = MarkdownTable(columns: ["Held record", "Why it is not written"], limit: 300)
            for held in plan.held { table.add([.text(held.id.rawValue), .text(held.reason)]) }
            out += table.rendered(budget: 4_000) + "\n"
        }
        return out
    }

    /// "3 writes (1 create, 1 update, 1 delete), 5 field changes; 1 record held".
    static func summary(_ plan: SavedPlan) -> String {
        let counts = SavedPlan.Write.Action.allCases.compactMap { action -> String? in
            let n = plan.count(action)
            return n == 0 ? nil : "\(n) \(action.rawValue)\(n == 1 ? "" : "s")"
        }
        var text = plan.writes.isEmpty ? "no writes" : plural(plan.writes.count, "write") + " (" + counts.joined(separator: ", ") + "), "
            + plural(plan.fieldChangeCount, "field change")
        if !plan.held.isEmpty { text += "; " + plural(plan.held.count, "record") + " held" }
        return text
    }

    /// The target as a reviewer recognises it: the collection path and where it is.
    static func targetName(_ plan: SavedPlan) -> String {
        let place = plan.target.emulatorHost.map { "the emulator at \($0)" } ?? plan.target.endpoint
        return "\(plan.target.collection) (remote '\(plan.remoteName)', \(place))"
    }

    /// A field's path, with the title the schema declares for it (config
    /// `"title"`), so a reviewer reads what it means.
    static func fieldLabel(_ path: FieldPath, schema: RecordSchema?) -> String {
        guard let title = schema?.declaration(at: path)?.title else { return path.description }
        return "\(path.description) (\(title))"
    }

    private static func show(_ value: Value?) -> TerminalText {
        value.map { TerminalText(json: CanonicalJSON.encodeInline($0)) } ?? "(absent)"
    }
}
