extension SavedPlan {
    /// Why this plan cannot be applied under the scope `now` (config.json's
    /// `"scope"` as booksync spells it), or nil when it was made under the
    /// same one: a write planned inside one scope may fall outside the other
    /// (then push would hold it, and the next pull let it go).
    /// The plan's scope is text from a file, so it is read as a scope
    /// (compared, and shown, in booksync's own spelling) and shortened.
    package func scopeProblem(now: String?) -> String? {
        var planned: String?
        if let scope {
            do {
                planned = try ScopeExpression.parse(scope).description
            } catch {
                return "holds a scope that is not one ('\(TerminalEscaping.abbreviate(scope))': \(error.description)); make the plan again (booksync plan)"
            }
        }
        guard planned != now else { return nil }
        let made = planned.map { "was made for the collection's scope '\(TerminalEscaping.abbreviate($0))'" }
            ?? "records no scope (it was made for the whole collection, or by a booksync that did not record scopes)"
        let current = now.map { "config.json now sets the scope '\(TerminalEscaping.abbreviate($0))'" } ?? "config.json sets no scope"
        return "\(made), but \(current), which changes what push writes; make the plan again (booksync plan)"
    }
}
