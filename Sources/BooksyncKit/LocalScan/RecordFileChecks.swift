import BooksyncCore

/// What `validate` found in one file.
package struct ValidationReport: Sendable, Equatable {
    /// Absolute path of the file.
    package let path: String
    /// Empty when the file is a valid record.
    package let diagnostics: [RecordDiagnostic]
    /// What a valid record is warned about: fields its schema does not
    /// declare under `"strict": "warning"`. Empty for an invalid one.
    package var warnings: [String] = []
}

/// What `fmt` did, or would do, to one file.
package struct FormatReport: Sendable, Equatable {
    /// What happened to the file.
    package enum Outcome: Sendable, Equatable {
        /// The file was already in canonical form; nothing was written.
        case alreadyCanonical
        /// The file was rewritten in canonical form (same values, canonical bytes).
        case reformatted
        /// `--check`: the file is not in canonical form.
        case needsFormatting
        /// The file cannot be parsed, or changed meanwhile; it was left untouched.
        case failed(RecordDiagnostic)
        /// The file could not be read or rewritten (a full disk, a refused
        /// kind of file, no permission); it was left as it was.
        case notWritten(RecordDiagnostic)
    }

    /// Absolute path of the file.
    package let path: String
    /// What `fmt` did or would do.
    package let outcome: Outcome
}

extension CollectionDirectory {
    /// Checks files against the schema and Firestore's limits (`booksync validate`).
    /// Reads files on several threads; writes nothing and takes no lock.
    /// - Parameter arguments: As for `RecordFiles.filePaths(_:rootOnly:)`.
    /// - Returns: One report per file, in the order of `RecordFiles.filePaths(_:rootOnly:)`;
    ///   an unreadable file is a report with its error, not a thrown one.
    /// - Throws: `BooksyncError` from `RecordFiles.filePaths(_:rootOnly:)` only.
    package func validate(_ arguments: [String]) async throws(BooksyncError) -> [ValidationReport] {
        var reports: [ValidationReport] = []
        _ = try await validate(arguments) { reports.append($0) }
        return reports
    }

    /// `validate(_:)` handing each report to `each` as soon as its batch is
    /// checked, in the same order, so a million files never have a million
    /// reports (or paths) in memory: only their sorted names.
    /// - Parameters:
    ///   - arguments: As for `RecordFiles.filePaths(_:rootOnly:)`.
    ///   - operandsFromRoot: Relative paths are from the collection only, not
    ///     also from the current directory (a workspace hands each collection its operands).
    ///   - willCheck: Called once with the number of files, before the first report.
    ///   - each: Gets each report, in order.
    /// - Returns: How many files were checked.
    /// - Throws: `BooksyncError` from `RecordFiles.filePaths(_:rootOnly:)` only.
    package func validate(_ arguments: [String], operandsFromRoot: Bool = false, willCheck: (Int) -> Void = { _ in },
                         each: (ValidationReport) -> Void) async throws(BooksyncError) -> Int {
        let files = recordFiles
        return try files.checkEach(arguments, operandsFromRoot: operandsFromRoot, willCheck: willCheck, check: { path in
            let (diagnostics, warnings) = files.diagnose(path: path)
            return ValidationReport(path: path, diagnostics: diagnostics, warnings: warnings)
        }, refused: { path, diagnostic in ValidationReport(path: path, diagnostics: [diagnostic]) }, each: each)
    }

    /// Rewrites files in canonical form, or with `checkOnly` reports which are not
    /// (`booksync fmt [--check]`). Files that do not parse are never touched.
    /// Only syntax matters here; schema problems are `validate`'s business.
    /// - Parameters:
    ///   - arguments: As for `RecordFiles.filePaths(_:rootOnly:)`.
    ///   - checkOnly: Report `.needsFormatting` instead of rewriting.
    /// - Returns: One report per file, in the order of `RecordFiles.filePaths(_:rootOnly:)`.
    /// - Throws: `BooksyncError` from `RecordFiles.filePaths(_:rootOnly:)` only.
    package func format(_ arguments: [String], checkOnly: Bool) async throws(BooksyncError) -> [FormatReport] {
        var reports: [FormatReport] = []
        _ = try await format(arguments, checkOnly: checkOnly) { reports.append($0) }
        return reports
    }

    /// `format(_:checkOnly:)` handing each report to `each` as soon as its
    /// batch is done, in the same order (as `validate(_:willCheck:each:)`).
    /// - Returns: How many files were checked.
    package func format(_ arguments: [String], checkOnly: Bool, operandsFromRoot: Bool = false,
                       each: (FormatReport) -> Void) async throws(BooksyncError) -> Int {
        let files = recordFiles
        return try files.checkEach(arguments, operandsFromRoot: operandsFromRoot, willCheck: { _ in }, check: { path in
            FormatReport(path: path, outcome: files.format(path: path, checkOnly: checkOnly))
        }, refused: { path, diagnostic in FormatReport(path: path, outcome: .failed(diagnostic)) }, each: each)
    }
}

extension RecordFiles {
    /// Absolute paths of the files named, or of every record-like file in the
    /// collection directory when none are named.
    /// Files named on the command line must be record files of this collection:
    /// `fmt` rewrites what it is given, and a path outside must never be rewritten.
    /// - Parameter arguments: Paths as the user gave them, relative to the
    ///   current directory or absolute; empty for the whole collection.
    /// - Throws: `BooksyncError.invalidArgument` for a path that is not a record
    ///   file directly in the collection, `.io` if the directory cannot be listed.
    /// - Parameter rootOnly: Relative paths are from the collection only, not
    ///   the current directory (a workspace hands each collection its operands).
    package func filePaths(_ arguments: [String], rootOnly: Bool = false) throws(BooksyncError) -> [String] {
        if !arguments.isEmpty {
            return try arguments.map { (argument: String) throws(BooksyncError) -> String in
                let relative = try relativePath(ofFileArgument: argument, rootOnly: rootOnly)
                // At the top, any record-like name (a bad one is reported, never rewritten);
                // below it, only a record file of a configured subcollection.
                if !relative.contains("/") {
                    guard RecordID.isRecordFileName(relative) else {
                        throw .invalidArgument("'\(TerminalEscaping.abbreviate(argument))': not a record file name (records are <id>.json and not hidden)")
                    }
                    return paths.recordFile(relative)
                }
                return paths.root + "/" + (try recordID(atRelativePath: relative, argument: argument)).fileName
            }
        }
        return try names().map(paths.recordFile)
    }

    /// The files named, or every record file of the collection, checked by
    /// `check` on several threads a batch at a time, each report handed to
    /// `each` in order, then one per refused subcollection folder (`refused`).
    /// A batch's paths are made when it is checked, so a million files cost
    /// their sorted names, never a million paths or reports.
    /// - Returns: How many reports were handed on.
    func checkEach<Report: Sendable>(_ arguments: [String], operandsFromRoot: Bool, willCheck: (Int) -> Void,
                                     check: @escaping @Sendable (String) -> Report,
                                     refused: (String, RecordDiagnostic) -> Report,
                                     each: (Report) -> Void) throws(BooksyncError) -> Int {
        let names: [String]
        var refusedFolders: [UnusableFile] = []
        if arguments.isEmpty {
            (names, refusedFolders) = try namesAndRefusedFolders()
        } else {
            let (files, pathspecs) = Self.filesAndPathspecs(arguments)
            // Not `filePaths([])`, which is every file.
            names = try (files.isEmpty ? [] : filePaths(files, rootOnly: operandsFromRoot))
                + filePaths(selectedBy: pathspecs, fromRoot: operandsFromRoot)
        }
        willCheck(names.count + refusedFolders.count)
        let paths = self.paths
        let named = !arguments.isEmpty
        for start in stride(from: 0, to: names.count, by: 4096) {
            let batch = Array(names[start..<min(start + 4096, names.count)])
            for report in ParallelMap.map(batch, chunkSize: 64, { name in check(named ? name : paths.recordFile(name)) }) { each(report) }
        }
        for folder in refusedFolders { each(refused(paths.recordFile(folder.fileName), RecordDiagnostic(message: folder.message))) }
        return names.count + refusedFolders.count
    }

    /// The problems of one file, or the warnings of a valid one.
    func diagnose(path: String) -> (problems: [RecordDiagnostic], warnings: [String]) {
        let id: RecordID
        do {
            guard let decoded = try Self.recordID(ofFile: path, paths: paths, rules: rules) else {
                return ([RecordDiagnostic(message: "not a record file name (records are <id>.json and not hidden)")], [])
            }
            id = decoded
        } catch {
            return ([RecordDiagnostic(message: error.message)], [])
        }
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(paths.recordFile(id))
        } catch {
            return ([error.diagnostic], [])
        }
        switch rules.load(bytes, id: id) {
        case .success(let record): return ([], rules.warnings(in: record.fields, id: id))
        case .failure(let problems): return (problems.diagnostics, [])
        }
    }

    /// What `fmt` does, or with `checkOnly` would do, to the file at `path`.
    func format(path: String, checkOnly: Bool) -> FormatReport.Outcome {
        let bytes: [UInt8]
        // A subcollection record's folders are checked (never a link) before it is read.
        let id = try? Self.recordID(ofFile: path, paths: paths, rules: rules)
        do {
            if let id, !id.isTopLevel { _ = try paths.recordFile(id) }
            bytes = try FileSystem.readFile(path)
        } catch {
            // A link, FIFO or folder in a record's place is reported as every command reports it.
            return error.unsafeKind == nil ? .notWritten(error.diagnostic) : .failed(error.diagnostic)
        }
        switch rules.parseKeepingHint(bytes) {
        case .failure(let diagnostic):
            return .failed(diagnostic)
        case .success(let (fields, hint)):
            // The editor's `$schema` hint stays, first; a hint that is not a
            // string is left where it is for `validate` to name.
            let canonical: [UInt8]
            switch hint {
            case nil: canonical = rules.canonicalBytes(fields, id: id ?? nil)
            case .string(let text)?: canonical = rules.fileBytes(fields, id: id ?? nil, hint: text)
            case let other?:
                var kept = fields
                kept[EditorSchemaHint.key] = other
                canonical = rules.canonicalBytes(kept, id: id ?? nil)
            }
            if canonical == bytes { return .alreadyCanonical }
            if checkOnly { return .needsFormatting }
            do {
                // An editor's save between the read and the rename is never replaced.
                guard try FileSystem.replace(path, with: canonical, ifCurrent: { $0 == bytes }) else {
                    return .failed(RecordDiagnostic(message: "changed while booksync was formatting it; run booksync fmt again"))
                }
            } catch {
                return .notWritten(error.diagnostic)
            }
            return .reformatted
        }
    }
}
