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
    /// The top-level field name.
    public let name: String
    /// The value at the last sync; nil if absent then (or no base exists).
    public let base: Value?
    /// The value in the record file; nil if absent there.
    public let local: Value?
    /// The value in the Firestore document; nil if absent there.
    public let remote: Value?
    /// Which side changed the field relative to `base`.
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
