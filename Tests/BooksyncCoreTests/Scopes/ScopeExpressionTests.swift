import Testing
@testable import BooksyncCore

/// Scope text (`--where`, config "scope"): what parses, how it prints back,
/// where a bad one stopped and what was expected there, and how a record's
/// fields are matched locally.
@Suite struct ScopeExpressionTests {
    static let parsed: [(text: String, printed: String)] = [
        ("rating >= 4", "rating >= 4"),
        ("genre==\"sf\"", "genre == \"sf\""),
        ("a == 1 and b != 2 or c < 3", "a == 1 and b != 2 or c < 3"),
        ("a == 1 and (b != 2 or c < 3)", "a == 1 and (b != 2 or c < 3)"),
        ("((a == 1))", "a == 1"),
        ("stats.rating > 4.5", "stats.rating > 4.5"),
        ("`first name` == \"Ann\"", "`first name` == \"Ann\""),
        ("`a.b`.c == true", "`a.b`.c == true"),
        ("`back\\`tick` == null", "`back\\`tick` == null"),
        ("tags array-contains \"classic\"", "tags array-contains \"classic\""),
        ("tags array-contains-any [\"a\", \"b\"]", "tags array-contains-any [\"a\", \"b\"]"),
        ("genre in [\"sf\", \"fantasy\"]", "genre in [\"sf\", \"fantasy\"]"),
        ("genre not-in [\"romance\"]", "genre not-in [\"romance\"]"),
        ("published >= {\"$timestamp\": \"2020-01-01T00:00:00Z\"}", "published >= {\"$timestamp\": \"2020-01-01T00:00:00.000000Z\"}"),
        ("a == 1 AND b == 2 Or c == 3", "a == 1 and b == 2 or c == 3"),
        ("insert in [1]", "insert in [1]"),
    ]

    @Test(arguments: parsed) func parsesAndPrintsBack(_ example: (text: String, printed: String)) throws {
        let expression = try ScopeExpression.parse(example.text)
        #expect(expression.description == example.printed)
        #expect(try ScopeExpression.parse(expression.description) == expression, "prints what parses back")
    }

    static let refused: [(text: String, column: Int, message: String)] = [
        ("", 1, "expected a field name, found the end of the scope"),
        ("rating", 7, "expected an operator (== != < <= > >= in not-in array-contains array-contains-any), found the end of the scope"),
        ("rating is 4", 8, "expected an operator"),
        ("rating >= ", 11, "expected a value after '>=', found the end of the scope"),
        ("rating >= four", 11, "expected a JSON value or a tagged value"),
        ("a == 1 b == 2", 8, "expected 'and', 'or' or the end of the scope, found 'b'"),
        ("(a == 1", 8, "expected ')' or 'and' or 'or', found the end of the scope"),
        ("a == 1 and", 11, "expected a field name"),
        ("genre in \"sf\"", 10, "'in' takes a list of 1 to 30 values"),
        ("genre not-in [1,2,3,4,5,6,7,8,9,10,11]", 14, "'not-in' takes a list of 1 to 10 values"),
        ("tags array-contains [1]", 6, "'array-contains' takes one value"),
        ("rating > null", 10, "'>' orders numbers, strings"),
        ("genre in [\"a\", null]", 10, "'in' cannot list null or NaN"),
        ("rating > {\"a\": 1}", 10, "'>' orders numbers"),
        ("`unclosed == 1", 15, "expected a closing backtick"),
        ("a. == 1", 3, "expected a field name after '.'"),
        ("1a == 1", 1, "expected a field name, found '1a'"),
        ("é == 1", 1, "expected a field name"),
    ]

    @Test(arguments: refused) func aBadScopeSaysWhereAndWhat(_ example: (text: String, column: Int, message: String)) {
        do {
            _ = try ScopeExpression.parse(example.text)
            Issue.record("\(example.text) parsed")
        } catch {
            #expect(error.column == example.column, "\(example.text): \(error)")
            #expect(error.message.hasPrefix(example.message), "\(example.text): \(error)")
        }
    }

    @Test func boundsItsInput() {
        let long = "a == \"" + String(repeating: "x", count: 5_000) + "\""
        #expect(throws: ScopeSyntaxError.self) { try ScopeExpression.parse(long) }
        let deep = String(repeating: "(", count: 40) + "a == 1" + String(repeating: ")", count: 40)
        #expect(throws: ScopeSyntaxError(column: 17, message: "parentheses nested more than 16 deep")) { try ScopeExpression.parse(deep) }
        let many = (0...100).map { "f\($0) == 1" }.joined(separator: " or ")
        #expect(throws: ScopeSyntaxError.self) { try ScopeExpression.parse(many) }
    }

    static let record: Fields = [
        "rating": .double(4.5), "count": .integer(3), "genre": .string("sf"), "empty": .null, "nan": .double(.nan),
        "tags": .array([.string("classic"), .integer(1)]), "stats": .map(["votes": .integer(10)]), "flag": .bool(true),
    ]

    static let matching: [(text: String, matches: Bool)] = [
        ("rating >= 4", true), ("rating > 4.5", false), ("count == 3.0", true), ("count < 3.5", true),
        ("genre == \"sf\"", true), ("genre < \"t\"", true), ("genre > 1", false), ("rating < \"z\"", false),
        ("missing != 1", false), ("missing not-in [1]", false), ("empty == null", true), ("empty != 1", false),
        ("empty != null", false), ("genre != null", true), ("nan == {\"$double\": \"NaN\"}", true), ("nan > 0", false),
        ("genre in [\"x\", \"sf\"]", true), ("genre not-in [\"x\"]", true), ("genre not-in [\"sf\"]", false),
        ("tags array-contains \"classic\"", true), ("tags array-contains 1.0", true), ("tags array-contains-any [2, \"classic\"]", true),
        ("genre array-contains \"s\"", false), ("stats.votes >= 10", true), ("stats == {\"votes\": 10.0}", true),
        ("flag == true and (count == 1 or genre == \"sf\")", true), ("flag == false or count > 5", false),
    ]

    @Test(arguments: matching) func matchesAsFirestoreWould(_ example: (text: String, matches: Bool)) throws {
        #expect(try ScopeExpression.parse(example.text).matches(Self.record) == example.matches, "\(example.text)")
    }
}
