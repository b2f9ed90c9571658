import BooksyncCore
@_spi(Remote) import BooksyncKit

/// What `booksync compare` shows: the comparison, the two remotes, and what
/// each was billed.
struct ComparedTargets: Sendable {
    /// One of the two targets.
    struct Target: Sendable {
        /// The remote's name (`origin`, `staging`).
        let remote: String
        /// Where it is (`firestore demo/(default) books`).
        let place: String
        /// Billed reads of every request the command made to it (`FirestoreUsage`).
        let billedReads: Int
    }

    let result: TargetComparison
    let a: Target
    let b: Target

    /// The billed reads of each target spent on comparing, and all of them
    /// spent on showing the differing fields (`TargetComparison.Reads.shown`,
    /// one per id asked by name, which is exactly what those requests are billed).
    var billedToCompare: (a: Int, b: Int) {
        (max(0, a.billedReads - result.readsA.shown), max(0, b.billedReads - result.readsB.shown))
    }

    var billedToShow: Int { result.readsA.shown + result.readsB.shown }
}

/// How `booksync compare` shows two targets' differences: lines for a
/// terminal, a JSON document, or Markdown for a pull-request comment.
enum CompareRenderer {
    /// `staging and production differ: 1 record only on staging, 1 different; 3 identical`;
    /// the remotes' names as `name` writes them (escaped for Markdown).
    static func summary(_ compared: ComparedTargets, name: (String) -> String = { $0 }) -> String {
        let result = compared.result, a = name(compared.a.remote), b = name(compared.b.remote)
        if result.isSame {
            return "\(a) and \(b) hold the same \(plural(result.identical, "record"))"
        }
        var parts: [String] = []
        if !result.onlyA.isEmpty { parts.append("\(plural(result.onlyA.count, "record")) only on \(a)") }
        if !result.onlyB.isEmpty { parts.append("\(parts.isEmpty ? plural(result.onlyB.count, "record") : String(result.onlyB.count)) only on \(b)") }
        if !result.different.isEmpty { parts.append("\(parts.isEmpty ? plural(result.different.count, "record") : String(result.different.count)) different") }
        if !result.invalid.isEmpty { parts.append(plural(result.invalid.count, "invalid document")) }
        if !result.unusable.isEmpty { parts.append(plural(result.unusable.count, "document") + " with no record id") }
        return "\(a) and \(b) differ: " + parts.joined(separator: ", ") + "; \(grouped(result.identical)) identical"
    }

    /// `read 1,204 documents from staging and 1,198 from production: 2,402 billed reads, plus 12 to show the differences`.
    static func billing(_ compared: ComparedTargets, name: (String) -> String = { $0 }) -> String {
        let (a, b) = compared.billedToCompare
        var text = "read \(grouped(a)) document\(a == 1 ? "" : "s") from \(name(compared.a.remote)) and \(grouped(b)) from \(name(compared.b.remote)): "
            + "\(grouped(a + b)) billed read\(a + b == 1 ? "" : "s")"
        if compared.billedToShow > 0 { text += ", plus \(grouped(compared.billedToShow)) to show the differences" }
        return text
    }

    // MARK: lines

    /// One block per record that differs, like `booksync diff`, then the
    /// summary and (unless `quiet`) the billed reads.
    static func lines(_ compared: ComparedTargets, color: Bool, quiet: Bool) -> [TerminalText] {
        let result = compared.result
        let a = compared.a.remote, b = compared.b.remote
        let width = max(a.count, b.count) + 2
        var blocks: [[TerminalText]] = []
        var entries: [(RecordID, [TerminalText])] = []
        for id in result.onlyA { entries.append((id, [Style.bold.apply("\(id): only on \(name: a)", enabled: color)])) }
        for id in result.onlyB { entries.append((id, [Style.bold.apply("\(id): only on \(name: b)", enabled: color)])) }
        for difference in result.different {
            var block = [Style.bold.apply("\(difference.id): different", enabled: color)]
            for field in difference.fields {
                block.append("  \(name: field.name)")
                block.append("    \(name: (a + ":").padding(to: width))\(Style.green.apply(show(field.a), enabled: color))")
                block.append("    \(name: (b + ":").padding(to: width))\(Style.cyan.apply(show(field.b), enabled: color))")
            }
            entries.append((difference.id, block))
        }
        for invalid in result.invalid {
            var block = [Style.bold.apply("\(invalid.id): invalid on \(name: invalid.side == .a ? a : b), not compared", enabled: color)]
            for problem in invalid.problems { block.append("  \(Style.red.apply("problem: \(problem.description)", enabled: color))") }
            entries.append((invalid.id, block))
        }
        // In id order, whatever the kind; an id invalid on both sides stays in side order.
        blocks = entries.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map(\.element.1)
        for unusable in result.unusable {
            let side = unusable.side == .a ? a : b
            blocks.append([Style.red.apply("remote document '\(name: unusable.document.name)' on \(name: side): \(unusable.document.message)", enabled: color)])
        }
        var lines: [TerminalText] = []
        for block in blocks {
            lines += block
            lines.append("")
        }
        lines.append("\(summary(compared))")
        if !quiet { lines.append("\(billing(compared))") }
        return lines
    }

    /// A value as written in record files, escaped for the terminal.
    static func show(_ value: Value?) -> TerminalText {
        value.map { TerminalText(json: CanonicalJSON.encodeInline($0)) } ?? "(absent)"
    }

    // MARK: JSON

    /// The `--json` document (version 1):
    ///
    /// - `version`: 1.
    /// - `a`, `b`: the two targets, each `{remote, target, billedReads,
    ///   reads: {compared, shown}}`: the remote's name, where it is, the
    ///   reads it was billed (as `-v` estimates them), and the documents read
    ///   to compare and read again to show differing fields.
    /// - `same`: true when the exit status is 0.
    /// - `identical`: how many records both hold with the same content.
    /// - `onlyA`, `onlyB`: `[{id, file}]`, records only one target holds.
    /// - `different`: `[{id, file, fields}]`, each field `{name, path, a, b}`
    ///   (`name`: its dotted path, `path`: the same as a list of names,
    ///   `a`/`b`: its value on each target, left out where it is absent).
    /// - `invalid`: `[{id, file, side, problems}]`, documents that cannot be
    ///   records (`side`: `"a"` or `"b"`), not compared.
    /// - `unusable`: `[{side, id, problem}]`, documents whose names are no record id.
    /// - `billedReads`: the two targets' billed reads together.
    ///
    /// Stable: fields are only ever added.
    static func json(_ compared: ComparedTargets) -> Fields {
        let result = compared.result
        func records(_ ids: [RecordID]) -> Value {
            .array(ids.map { .map(["id": .string($0.rawValue), "file": .string($0.fileName)]) })
        }
        func target(_ target: ComparedTargets.Target, reads: TargetComparison.Reads) -> Value {
            .map([
                "remote": .string(target.remote), "target": .string(target.place), "billedReads": .integer(Int64(target.billedReads)),
                "reads": .map(["compared": .integer(Int64(reads.compared)), "shown": .integer(Int64(reads.shown))]),
            ])
        }
        let different: [Value] = result.different.map { difference in
            let fields: [Value] = difference.fields.map { field in
                var entry: Fields = ["name": .string(field.name), "path": .array(field.path.segments.map(Value.string))]
                if let value = field.a { entry["a"] = value }
                if let value = field.b { entry["b"] = value }
                return .map(entry)
            }
            return .map(["id": .string(difference.id.rawValue), "file": .string(difference.id.fileName), "fields": .array(fields)])
        }
        let invalid: [Value] = result.invalid.map {
            .map(["id": .string($0.id.rawValue), "file": .string($0.id.fileName), "side": .string($0.side.rawValue),
                  "problems": JSONDocuments.problems($0.problems)])
        }
        let unusable: [Value] = result.unusable.map {
            .map(["side": .string($0.side.rawValue), "id": .string($0.document.name), "problem": .string($0.document.message)])
        }
        return [
            "version": .integer(1),
            "a": target(compared.a, reads: result.readsA), "b": target(compared.b, reads: result.readsB),
            "same": .bool(result.isSame), "identical": .integer(Int64(result.identical)),
            "onlyA": records(result.onlyA), "onlyB": records(result.onlyB),
            "different": .array(different), "invalid": .array(invalid), "unusable": .array(unusable),
            "billedReads": .integer(Int64(compared.a.billedReads + compared.b.billedReads)),
        ]
    }

    // MARK: Markdown

    /// A pull-request comment: a heading naming both targets, the summary and
    /// the billed reads, and (when they differ) a table with one row per
    /// differing field, per record only one target holds, and per invalid
    /// document. Every outside string is escaped by `MarkdownText.escape`.
    /// Ends with one newline.
    static func markdown(_ compared: ComparedTargets) -> String {
        let result = compared.result
        let a = compared.a.remote, b = compared.b.remote
        var out = "### booksync compare: \(MarkdownText.escape(a)) and \(MarkdownText.escape(b))\n\n"
        out += "- \(MarkdownText.escape(a)): \(MarkdownText.escape(compared.a.place))\n"
        out += "- \(MarkdownText.escape(b)): \(MarkdownText.escape(compared.b.place))\n\n"
        // booksync's own words and numbers, with the remotes' names escaped.
        out += summary(compared, name: MarkdownText.escape) + "\n\n"
        out += billing(compared, name: MarkdownText.escape) + "\n"
        guard !result.isSame else { return out }
        out += "\n"
        var rows: [(RecordID, [[MarkdownTable.Cell]])] = []
        for id in result.onlyA { rows.append((id, [[.text(id.rawValue), .note("only on \(a)"), .note(""), .note("present"), .note("absent")]])) }
        for id in result.onlyB { rows.append((id, [[.text(id.rawValue), .note("only on \(b)"), .note(""), .note("absent"), .note("present")]])) }
        for difference in result.different {
            rows.append((difference.id, difference.fields.map { field in
                [.text(difference.id.rawValue), .note("different"), .text(field.name)] + MarkdownText.window([field.a, field.b])
            }))
        }
        for invalid in result.invalid {
            let problems = MarkdownTable.Cell.text(invalid.problems.map(\.description).joined(separator: "; "))
            let side = invalid.side == .a ? a : b
            rows.append((invalid.id, [[.text(invalid.id.rawValue), .note("invalid on \(side)"), .note(""),
                                       invalid.side == .a ? problems : .note(""), invalid.side == .b ? problems : .note("")]]))
        }
        var table = MarkdownTable(columns: ["Record", "Difference", "Field", a, b])
        for (_, cells) in rows.enumerated().sorted(by: { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }).map(\.element) {
            for row in cells { table.add(row) }
        }
        for unusable in result.unusable {
            let side = unusable.side == .a ? a : b
            table.add([.text(unusable.document.name), .note("no record id on \(side)"), .note(""),
                       unusable.side == .a ? .text(unusable.document.message) : .note(""), unusable.side == .b ? .text(unusable.document.message) : .note("")])
        }
        return out + table.rendered()
    }

}
