import Testing
@testable import BooksyncCore

/// When `apply` refuses a plan for its scope (config.json "scope"): the
/// plan's scope is text from a file, read as a scope and compared in
/// booksync's own spelling, and shown shortened.
@Suite struct PlanScopeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let planned: String?
        let now: String?
        /// nil: applied; else a part of the refusal.
        let refusal: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "neither has a scope", planned: nil, now: nil, refusal: nil),
        Case(name: "the same scope", planned: "rating >= 3", now: "rating >= 3", refusal: nil),
        Case(name: "the same scope spelled otherwise", planned: #"rating>=3  and genre=="sf""#, now: #"rating >= 3 and genre == "sf""#,
             refusal: nil),
        Case(name: "another scope", planned: "rating >= 3", now: "rating >= 5",
             refusal: "was made for the collection's scope 'rating >= 3', but config.json now sets the scope 'rating >= 5'"),
        Case(name: "a plan without a scope", planned: nil, now: "rating >= 5",
             refusal: "records no scope (it was made for the whole collection, or by a booksync that did not record scopes), but config.json now sets"),
        Case(name: "a scope no longer set", planned: "rating >= 3", now: nil, refusal: "but config.json sets no scope"),
        Case(name: "not a scope", planned: "x', but config.json now sets the scope 'y", now: "rating >= 3",
             refusal: "holds a scope that is not one ('x', but config.json now sets the scope 'y': column"),
        Case(name: "a long one", planned: String(repeating: "a == 1 and ", count: 40) + "b == 2", now: "b == 2", refusal: "…"),
    ]

    @Test(arguments: cases)
    func aPlanIsAppliedOnlyUnderItsOwnScope(_ test: Case) throws {
        let plan = SavedPlan(remoteName: "origin", target: TargetIdentity(endpoint: "emulator@127.0.0.1:8080", collection: "projects/p/databases/(default)/documents/books"),
                             pathspecs: [], writes: [], held: [], scope: test.planned)
        let problem = plan.scopeProblem(now: test.now)
        guard let refusal = test.refusal else {
            #expect(problem == nil)
            return
        }
        let text = try #require(problem)
        #expect(text.contains(refusal), "\(text)")
        #expect(text.hasSuffix("make the plan again (booksync plan)"))
        #expect(text.utf8.count < 400, "shortened: \(text)")
    }
}
