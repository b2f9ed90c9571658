/// The merge git's driver writes for one record file: the field-level merge,
/// checked against the collection's rules for the record's path.
///
/// A field merge of two valid records can still be invalid: their side
/// dropped a required field, changed its type, or changed `id` so that it no
/// longer matches the file name; or both sides grew the document past a
/// Firestore limit. Such a merge is a conflict, never a clean result: the
/// fields that broke the rules keep our value (like conflicting fields), and
/// if that is not enough the whole record stays ours.
package enum RecordFileMerge {
    /// The merged record file and what the user must look at.
    package struct Outcome: Sendable, Equatable {
        /// What to write: valid whenever ours was.
        package let fields: Fields
        /// Paths changed differently on both sides (kept ours), sorted.
        package let conflicts: [FieldPath]
        /// Fields that kept our value because their change broke the rules, sorted.
        package let keptForValidity: [String]
        /// Why the plain field merge was invalid; empty when it was valid.
        package let problems: [RecordDiagnostic]
        /// Even keeping our value of those fields was invalid: `fields` is ours.
        package let keptOursWhole: Bool

        /// Nothing for the user to settle.
        package var isClean: Bool { conflicts.isEmpty && problems.isEmpty }
    }

    /// Merges `ours` and `theirs` against `base` (nil: added on both sides) and
    /// validates the result as the record `id` (from the path git merges).
    /// - Parameters:
    ///   - base: The common ancestor's fields; nil when both sides added the record.
    ///   - ours: The fields of the version being merged into.
    ///   - theirs: The fields of the other version, which wins nothing on a conflict.
    ///   - id: The record, read from the path git merges.
    ///   - rules: The collection's rules (schema, id field, limits)
    ///     the result must meet.
    package static func merge(base: Fields?, ours: Fields, theirs: Fields, id: RecordID, rules: RecordRules) -> Outcome {
        let (merged, conflicts) = FieldMerge.mergeKeepingLocal(base: base, local: ours, remote: theirs)
        let problems = rules.problems(in: merged, id: id)
        if problems.isEmpty {
            return Outcome(fields: merged, conflicts: conflicts, keptForValidity: [], problems: [], keptOursWhole: false)
        }
        // The schema's fields (id and the required ones) are the ones a side can
        // break on its own; take ours for each that the merge changed.
        var repaired = merged
        var kept: [String] = []
        for key in rules.schema(for: id).leadingKeys where merged[key] != ours[key] {
            repaired[key] = ours[key]
            kept.append(key)
        }
        if !kept.isEmpty, rules.problems(in: repaired, id: id).isEmpty {
            return Outcome(fields: repaired, conflicts: conflicts, keptForValidity: kept.sorted(by: CanonicalJSON.utf8Less),
                           problems: problems, keptOursWhole: false)
        }
        return Outcome(fields: ours, conflicts: conflicts, keptForValidity: [], problems: problems, keptOursWhole: true)
    }
}
