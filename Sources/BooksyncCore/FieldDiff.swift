/// Which side changed a field, relative to the base.
public enum FieldChange: String, Sendable, Equatable {
    /// Changed locally only.
    case local
    /// Changed remotely only.
    case remote
    /// Changed on both sides to the same value.
    case both
    /// Changed on both sides to different values.
    case conflict
}

/// One top-level field that differs somewhere among base, local and remote.
/// A nil value means the field (or the whole record) is absent on that side.
public struct FieldDifference: Sendable, Equatable {
    public let name: String
    public let base: Value?
    public let local: Value?
    public let remote: Value?
    public let change: FieldChange
}

/// The fields that differ between the three versions of a record, for `diff`.
public enum FieldDiff {
    /// Every top-level field whose value is not the same in all three versions,
    /// sorted by name. Without a base (a record new on both sides), a field
    /// present on one side only counts as that side's change and a differing
    /// value present on both sides as a conflict.
    public static func compare(base: Fields?, local: Fields?, remote: Fields?) -> [FieldDifference] {
        let keys = Set(base?.keys ?? [:].keys).union(local?.keys ?? [:].keys).union(remote?.keys ?? [:].keys)
        return keys.sorted(by: CanonicalJSON.utf8Less).compactMap { key in
            let b = base?[key], l = local?[key], r = remote?[key]
            if b == l, l == r { return nil }
            let change: FieldChange = switch ThreeWay(base: b, ours: l, theirs: r) {
            case .same: .both
            case .theirs: .remote
            case .ours: .local
            case .conflict: .conflict
            }
            return FieldDifference(name: key, base: b, local: l, remote: r, change: change)
        }
    }
}
