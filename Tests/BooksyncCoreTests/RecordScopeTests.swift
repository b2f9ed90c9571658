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
}
