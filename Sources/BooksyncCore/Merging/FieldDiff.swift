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

/// One field (at any depth of nested maps) that differs somewhere among base,
/// local and remote. A nil value means the field (or the whole record) is
/// absent on that side.
public struct FieldDifference: Sendable, Equatable {
    /// Where the field is: a top-level name, or map keys below one.
    public let path: FieldPath
    /// The value at the last sync; nil if absent then (or no base exists).
    public let base: Value?
    /// The value in the record file; nil if absent there.
    public let local: Value?
    /// The value in the Firestore document; nil if absent there.
    public let remote: Value?
    /// Which side changed the field relative to `base`.
    public let change: FieldChange

    /// The path in Firestore's dotted notation (`stats.rating`, see `FieldPath`).
    public var name: String { path.description }

    /// A difference at `path`.
    public init(path: FieldPath, base: Value?, local: Value?, remote: Value?, change: FieldChange) {
        self.path = path
        self.base = base
        self.local = local
        self.remote = remote
        self.change = change
    }
}

/// The fields that differ between the three versions of a record, for `diff`.
package enum FieldDiff {
    /// Every field whose value is not the same in all three versions, sorted by
    /// path. Where the local and the remote record both hold a map, its keys
    /// are compared one by one (as `FieldMerge` merges them), so a difference
    /// is shown at the deepest path where it is (`stats.rating`); a map against
    /// anything else is one value. Without a base (a record new on both
    /// sides), a field present on one side only counts as that side's change
    /// and a differing value present on both sides as a conflict.
    package static func compare(base: Fields?, local: Fields?, remote: Fields?) -> [FieldDifference] {
        var differences: [FieldDifference] = []
        compare(base: base, local: local, remote: remote, at: nil, into: &differences)
        return differences
    }

    private static func compare(base: Fields?, local: Fields?, remote: Fields?, at parent: FieldPath?,
                                into differences: inout [FieldDifference]) {
        let keys = Set(base?.keys ?? [:].keys).union(local?.keys ?? [:].keys).union(remote?.keys ?? [:].keys)
        for key in keys.sorted(by: CanonicalJSON.utf8Less) {
            let path = parent?.appending(key) ?? FieldPath(field: key)
            let b = base?[key], l = local?[key], r = remote?[key]
            if b == l, l == r { continue }
            if case .map(let localMap)? = l, case .map(let remoteMap)? = r {
                let baseMap: Fields?
                if case .map(let map)? = b { baseMap = map } else { baseMap = nil }
                compare(base: baseMap, local: localMap, remote: remoteMap, at: path, into: &differences)
                continue
            }
            let change: FieldChange = switch ThreeWay(base: b, ours: l, theirs: r) {
            case .same: .both
            case .theirs: .remote
            case .ours: .local
            case .conflict: .conflict
            }
            differences.append(FieldDifference(path: path, base: b, local: l, remote: r, change: change))
        }
    }
}
