import Testing
@testable import BooksyncCore

/// Pathspecs as records see them: which file paths each kind selects.
@Suite struct RecordScopeTests {
    static func id(_ path: String) -> RecordID { RecordID(validated: path) }

    @Test(arguments: [
        // glob, file path, matches
        ("sci-*", "sci-fi.json", true),
        ("sci-*", "dune.json", false),
        ("sci-*", "sci/reviews/r1.json", false),
        ("*.json", "dune.json", true),
        ("*.json", "dune/reviews/r1.json", false),
        ("**/r1.json", "r1.json", true),
        ("**/r1.json", "dune/reviews/r1.json", true),
        ("**/r1.json", "dune/reviews/r10.json", false),
        ("dune/**", "dune/reviews/r1.json", true),
        ("dune/**", "dune.json", false),
        ("dune/*/r?.json", "dune/reviews/r1.json", true),
        ("dune/*/r?.json", "dune/reviews/r10.json", false),
        ("**", "anything/at/all.json", true),
        ("*", "-Nq1abc.json", true),
        ("a*b*c*d*e*f*g*h*i*j*k*z", String(repeating: "a", count: 200), false),
    ])
    func globs(glob: String, path: String, matches: Bool) {
        #expect(RecordScope.globMatches(Array(glob.utf8)[...], Array(path.utf8)[...]) == matches, "\(glob) ~ \(path)")
    }

    @Test func kindsSelectWhatTheySay() {
        let record = RecordScope.Pattern(.record(Self.id("dune")), text: "dune")
        let folder = RecordScope.Pattern(.folder("dune/reviews"), text: "dune/reviews/")
        #expect(record.matches(Self.id("dune")))
        #expect(!record.matches(Self.id("dune/reviews/r1")), "an id is that record, not its subcollections")
        #expect(folder.matches(Self.id("dune/reviews/r1")))
        #expect(!folder.matches(Self.id("dune")))
        #expect(!folder.matches(Self.id("dune/reviewsx/r1")), "a folder ends at its slash")
        let scope = RecordScope([record, folder])
        #expect(scope.contains(Self.id("dune")) && scope.contains(Self.id("dune/reviews/r2")) && !scope.contains(Self.id("emma")))
        #expect(scope.namedIDs == nil)
        #expect(RecordScope([record]).namedIDs == [Self.id("dune")])
        #expect(RecordScope.everything.contains(Self.id("anything")) && RecordScope.everything.namedIDs == nil)
        #expect(scope.unmatched([Self.id("dune")]) == [folder])
    }

    /// A glob matches an escaped id as its file is named and as it reads.
    @Test func aGlobMatchesAnEscapedIdEitherWay() {
        let cafe = Self.id("caf\u{E9}")
        #expect(cafe.fileName == "caf%C3%A9.json")
        for glob in ["caf%C3%A9*", "caf\u{E9}*", "caf\u{E9}.json", "c?f\u{E9}*"] {
            #expect(Self.glob(glob).matches(cafe), "\(glob)")
        }
        #expect(!Self.glob("caf\u{E9}s*").matches(cafe))
        #expect(!Self.glob("caf%C3%A9").matches(cafe), "a glob without .json or a star is no prefix")
    }

    static func glob(_ text: String) -> RecordScope.Pattern { RecordScope.Pattern(.glob(text), text: text) }

    @Test(arguments: [
        // patterns, the raw-id prefixes a remote lists (nil: every name)
        (["sci-*"], ["sci-"]),
        (["dune.js*"], ["dune"]),             // the dot may begin `.json`
        (["v1.2*"], ["v1.2"]),                // this one cannot
        (["caf%C3%A9*"], ["caf"]),            // escapes are cut, never decoded halfway
        (["dune/reviews/r?.json"], ["dune/reviews/r"]),
        (["dune/*/r1.json"], ["dune/"]),
        (["*.json"], nil),
        (["**/r1.json"], nil),
        (["sci-*", "*"], nil),                // one pattern without a start lists everything
        (["du*", "dune*", "b*"], ["b", "du"]),   // a covered prefix is dropped
    ] as [([String], [String]?)])
    func globsListTheirLiteralStart(globs: [String], prefixes: [String]?) {
        #expect(RecordScope(globs.map(Self.glob)).listingPrefixes == prefixes, "\(globs)")
    }

    @Test func idsAndFoldersListThemselves() {
        let scope = RecordScope([RecordScope.Pattern(.record(Self.id("emma")), text: "emma"), RecordScope.Pattern(.folder("dune/reviews"), text: "dune/reviews")])
        #expect(scope.listingPrefixes == ["dune/reviews/", "emma"])
        #expect(RecordScope.everything.listingPrefixes == nil)
    }

    /// What the prefixes promise: every record a glob selects starts with one.
    @Test(arguments: ["du*", "dune.j*", "caf%C3*", "d*/reviews/*", "a*", "dune/**"])
    func everySelectedRecordStartsWithAPrefix(glob: String) throws {
        let subcollections = try Subcollections.parse(paths: ["reviews"], requirements: [])
        let ids = try ["du", "dune", "dune.json", "dune.js", "caf\u{E9}", "a\u{10FFFF}b", "dune/reviews/r1", "du/reviews/x.json"].map {
            try RecordID(path: $0, subcollections: subcollections)
        }
        let scope = RecordScope([Self.glob(glob)])
        let prefixes = try #require(scope.listingPrefixes)
        let selected = ids.filter(scope.contains)
        #expect(!selected.isEmpty, "\(glob) selects something here")
        for id in selected {
            #expect(prefixes.contains { id.rawValue.utf8.starts(with: $0.utf8) }, "\(glob): \(id) outside \(prefixes)")
        }
    }
}
