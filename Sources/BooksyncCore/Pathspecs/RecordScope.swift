/// Which records a command works on: git-style pathspecs, or the whole
/// collection (the manual's Scopes article). Records outside the scope are not read,
/// written, deleted, recorded or reported, and keep their base entries.
///
/// Patterns are matched against a record's file path relative to the
/// collection directory (`dune.json`, `dune/reviews/r1.json`), in its encoded
/// form (`RecordID.fileName`); a folder or glob also against the id as it
/// reads, with `.json` (`café.json` for the file `caf%C3%A9.json`).
public struct RecordScope: Sendable, Equatable {
    /// One pathspec, with the text it was given as, for messages.
    public struct Pattern: Sendable, Equatable {
        /// What the pathspec names.
        public enum Kind: Sendable, Equatable {
            /// Exactly this record (an id, or a file).
            case record(RecordID)
            /// Every record below this folder (`dune/reviews`, no trailing slash).
            case folder(String)
            /// A glob on the file path: `*` and `?` within a segment, `**` across segments.
            case glob(String)
        }

        /// What it names.
        public let kind: Kind
        /// As the user wrote it.
        public let text: String

        /// A pattern; `text` is how messages name it.
        public init(_ kind: Kind, text: String) {
            self.kind = kind
            self.text = text
        }

        /// Whether a file path that is no record's (`sci-Bad Name.json`) is
        /// selected: by a folder it is in or a glob it matches, never by an id.
        public func matches(path: String) -> Bool {
            switch kind {
            case .record: false
            case .folder(let folder): path.utf8.starts(with: (folder + "/").utf8)
            case .glob(let glob): RecordScope.globMatches(Array(glob.utf8)[...], Array(path.utf8)[...])
            }
        }

        /// Whether the record `id` is selected by this pattern.
        public func matches(_ id: RecordID) -> Bool {
            switch kind {
            case .record(let named): id == named
            // An escaped id also matches as it reads: `'café*'` and `café/` as
            // well as `'caf%C3%A9*'` and `caf%C3%A9/`, so a folder and a glob
            // take the same spellings.
            case .folder, .glob: matches(path: id.fileName) || (id.encodedName != id.rawValue && matches(path: id.rawValue + ".json"))
            }
        }
    }

    /// The pathspecs; empty for the whole collection.
    public let patterns: [Pattern]

    /// A scope of these patterns; none is the whole collection.
    public init(_ patterns: [Pattern]) {
        self.patterns = patterns
    }

    /// The whole collection.
    public static let everything = RecordScope([])

    /// True when no pathspec narrows the command.
    public var isEverything: Bool { patterns.isEmpty }

    /// The records named one by one, when every pattern names exactly one:
    /// the remote side is then read with one `batchGet` of them, not a listing.
    public var namedIDs: [RecordID]? {
        guard !patterns.isEmpty else { return nil }
        var ids: [RecordID] = []
        for pattern in patterns {
            guard case .record(let id) = pattern.kind else { return nil }
            ids.append(id)
        }
        return ids
    }

    /// Whether `id` is in scope.
    public func contains(_ id: RecordID) -> Bool {
        patterns.isEmpty || patterns.contains { $0.matches(id) }
    }

    /// The patterns no record of `known` matches (for "matches no record").
    package func unmatched(_ known: some Sequence<RecordID>) -> [Pattern] {
        var left = patterns
        for id in known where !left.isEmpty {
            left.removeAll { $0.matches(id) }
        }
        return left
    }

    /// Whether `path` matches the glob `pattern`, segment by segment: `*` is
    /// any run of bytes within a segment, `?` one byte, and a whole segment
    /// `**` any number of segments, none included (so `**/r1.json` also
    /// matches `r1.json` at the top). Dynamic programming over the segments,
    /// so a hostile pattern costs at most pattern × path, never exponential.
    static func globMatches(_ pattern: ArraySlice<UInt8>, _ path: ArraySlice<UInt8>) -> Bool {
        let slash = UInt8(ascii: "/")
        let globs = pattern.split(separator: slash, omittingEmptySubsequences: false)
        let names = path.split(separator: slash, omittingEmptySubsequences: false)
        // matched[j]: the globs so far match the first j names.
        var matched = [Bool](repeating: false, count: names.count + 1)
        matched[0] = true
        for glob in globs {
            var next = [Bool](repeating: false, count: names.count + 1)
            if glob.elementsEqual("**".utf8) {
                var any = false
                for j in 0...names.count {
                    any = any || matched[j]
                    next[j] = any
                }
            } else {
                for j in 1..<(names.count + 1) where matched[j - 1] && segmentMatches(glob, names[j - 1]) {
                    next[j] = true
                }
            }
            matched = next
        }
        return matched[names.count]
    }

    /// One segment against a glob of `*` and `?`: greedy with backtracking to
    /// the last star, linear in practice and never worse than glob × name.
    static func segmentMatches(_ glob: ArraySlice<UInt8>, _ name: ArraySlice<UInt8>) -> Bool {
        let star = UInt8(ascii: "*"), question = UInt8(ascii: "?")
        var g = glob.startIndex, n = name.startIndex
        var resumeGlob: ArraySlice<UInt8>.Index?, resumeName = name.startIndex
        while n < name.endIndex {
            if g < glob.endIndex, glob[g] == star {
                g = glob.index(after: g)
                resumeGlob = g
                resumeName = n
            } else if g < glob.endIndex, glob[g] == name[n] || glob[g] == question {
                g = glob.index(after: g)
                n = name.index(after: n)
            } else if let resume = resumeGlob {
                resumeName = name.index(after: resumeName)
                n = resumeName
                g = resume
            } else {
                return false
            }
        }
        while g < glob.endIndex, glob[g] == star { g = glob.index(after: g) }
        return g == glob.endIndex
    }
}
