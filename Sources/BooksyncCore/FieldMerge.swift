/// Field-level three-way merge of records (DESIGN.md §3).
///
/// Top-level fields only: arrays and nested maps are compared as whole values.
/// A field changed on one side only takes that side's value; the same value on
/// both sides is fine; different values for the same field conflict. A field
/// removed on one side and unchanged on the other is removed.
public enum FieldMerge {
    /// A clean merge, or the fields that stop one.
    public enum Outcome: Sendable, Equatable {
        /// The merged record (equal to both sides when nothing conflicts).
        case merged(Fields)
        /// Field names changed differently on both sides, sorted by UTF-8 bytes.
        case conflicts([String])
    }

    /// Merges `local` and `remote` against their common `base`. Without a base
    /// (its copy is missing, or the record is new on both sides) nothing is known
    /// to be one-sided, so every field that differs between the sides conflicts.
    public static func merge(base: Fields?, local: Fields, remote: Fields) -> Outcome {
        let (merged, conflicts) = mergeKeepingLocal(base: base, local: local, remote: remote)
        return conflicts.isEmpty ? .merged(merged) : .conflicts(conflicts)
    }

    /// The merge with every conflicting field set to the local value, and the
    /// conflicting field names (sorted): what a git merge driver writes.
    public static func mergeKeepingLocal(base: Fields?, local: Fields, remote: Fields) -> (merged: Fields, conflicts: [String]) {
        var merged: Fields = [:]
        var conflicts: [String] = []
        let keys = Set(local.keys).union(remote.keys).union(base?.keys ?? [:].keys)
        for key in keys {
            let l = local[key], r = remote[key]
            let b = base?[key]
            let change = ThreeWay(base: b, ours: l, theirs: r, baseKnown: base != nil)
            if change == .conflict { conflicts.append(key) }
            if let chosen = change.kept(ours: l, theirs: r) { merged[key] = chosen }
        }
        return (merged, conflicts.sorted(by: CanonicalJSON.utf8Less))
    }
}
