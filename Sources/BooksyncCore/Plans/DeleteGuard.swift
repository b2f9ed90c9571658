/// The mass-delete safety rail (the manual's Safety article).
public struct DeleteGuard: Sendable, Equatable {
    /// Percentage of the base records one command may delete (`--max-delete`, default 50).
    public var maximumPercent: Double
    /// Deleting this many records is never refused, so one delete in a two-record
    /// collection goes through.
    package static let alwaysAllowed = 3

    /// A guard that refuses deleting more than `maximumPercent` of the base.
    public init(maximumPercent: Double = 50) {
        self.maximumPercent = maximumPercent
    }

    /// True when `deletes` of `baseCount` records is too many without `--force`.
    package func refuses(deletes: Int, baseCount: Int) -> Bool {
        guard deletes > Self.alwaysAllowed else { return false }
        return Double(deletes) > Double(baseCount) * maximumPercent / 100
    }

    /// Parses `--max-delete N%` (the `%` is optional).
    package static func parsePercent(_ text: String) -> Double? {
        let number = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let value = Double(number), value >= 0, value <= 100 else { return nil }
        return value
    }
}
