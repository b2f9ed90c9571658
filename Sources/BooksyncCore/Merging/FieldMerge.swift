/// Field-level three-way merge of records (the manual's ThreeWaySync article).
///
/// A field changed on one side only takes that side's value; the same value on
/// both sides is fine; different values for the same field conflict. A field
/// removed on one side and unchanged on the other is removed. Maps merge key by
/// key at any depth, so an app that sets `stats.views` through an update mask
/// and an editor who changes `stats.rating` in the file do not conflict; a
/// conflict is named by the path of the deepest value both sides changed
/// differently (`stats.rating`). Arrays and tagged values (timestamps, bytes,
/// references, geopoints) are single values and compared whole, and so is a
/// map on one side against anything else (or nothing) on the other: a key
/// deleted on one side and changed on the other conflicts at that key.
package enum FieldMerge {
    /// A clean merge, or the fields that stop one.
    package enum Outcome: Sendable, Equatable {
        /// The merged record (equal to both sides when nothing conflicts).
        case merged(Fields)
        /// Paths changed differently on both sides, in `FieldPath.utf8Less` order.
        case conflicts([FieldPath])
    }

    /// Merges `local` and `remote` against their common `base`. Without a base
    /// (its copy is missing, or the record is new on both sides) nothing is known
    /// to be one-sided, so every path that differs between the sides conflicts
    /// (at the deepest level where both sides still hold maps).
    package static func merge(base: Fields?, local: Fields, remote: Fields) -> Outcome {
        let (merged, conflicts) = mergeKeepingLocal(base: base, local: local, remote: remote)
        return conflicts.isEmpty ? .merged(merged) : .conflicts(conflicts)
    }

    /// The merge with every conflicting path set to the local value, and the
    /// conflicting paths (sorted): what a git merge driver writes.
    package static func mergeKeepingLocal(base: Fields?, local: Fields, remote: Fields) -> (merged: Fields, conflicts: [FieldPath]) {
        var conflicts: [FieldPath] = []
        let merged = mergeMaps(base: base ?? [:], local: local, remote: remote, baseKnown: base != nil,
                               at: nil, conflicts: &conflicts)
        return (merged, conflicts.sorted(by: FieldPath.utf8Less))
    }

    /// One level of the merge: `parent` is the path of these maps (nil at the top).
    private static func mergeMaps(base: Fields, local: Fields, remote: Fields, baseKnown: Bool,
                                  at parent: FieldPath?, conflicts: inout [FieldPath]) -> Fields {
        var merged: Fields = [:]
        for key in Set(local.keys).union(remote.keys).union(base.keys) {
            let path = parent?.appending(key) ?? FieldPath(field: key)
            let l = local[key], r = remote[key], b = base[key]
            if case .map(let localMap)? = l, case .map(let remoteMap)? = r, l != r {
                // Both sides hold a map: merge it key by key. A base that had no
                // map here had none of its keys.
                let baseMap: Fields
                if case .map(let map)? = b { baseMap = map } else { baseMap = [:] }
                merged[key] = .map(mergeMaps(base: baseMap, local: localMap, remote: remoteMap, baseKnown: baseKnown,
                                             at: path, conflicts: &conflicts))
                continue
            }
            let change = ThreeWay(base: b, ours: l, theirs: r, baseKnown: baseKnown)
            if change == .conflict { conflicts.append(path) }
            if let chosen = change.kept(ours: l, theirs: r) { merged[key] = chosen }
        }
        return merged
    }
}
