/// Field-level three-way merge of records (DESIGN.md §3).
///
/// Top-level fields only: arrays and nested maps are compared as whole values.
/// A field changed on one side only takes that side's value; the same value on
/// both sides is fine; different values for the same field conflict. A field
/// removed on one side and unchanged on the other is removed.
public enum FieldMerge {
    public enum Outcome: Sendable, Equatable {
        /// The merged record (equal to both sides when nothing conflicts).
        case merged(Fields)
        /// Field names changed differently on both sides, sorted by UTF-8 bytes.
        case conflicts([String])
    }

    /// Merges `local` and `remote` against their common `base`. Without a base
    /// (its copy is missing) nothing is known to be one-sided, so every field
    /// that differs between the sides conflicts.
    public static func merge(base: Fields?, local: Fields, remote: Fields) -> Outcome {
        var merged: Fields = [:]
        var conflicts: [String] = []
        let keys = Set(local.keys).union(remote.keys).union(base?.keys ?? [:].keys)
        for key in keys {
            let l = local[key], r = remote[key]
            if l == r {
                if let l { merged[key] = l }
                continue
            }
            guard let base else {
                conflicts.append(key)
                continue
            }
            let b = base[key]
            if l == b {
                if let r { merged[key] = r }
            } else if r == b {
                if let l { merged[key] = l }
            } else {
                conflicts.append(key)
            }
        }
        if conflicts.isEmpty { return .merged(merged) }
        return .conflicts(conflicts.sorted(by: CanonicalJSON.utf8Less))
    }
}
