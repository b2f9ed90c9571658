/// The three-way rule every merge and diff applies to one value: a manifest
/// entry and the config fingerprint (`ManifestMerge`), a record's field at any
/// depth of nested maps (`FieldMerge`, `FieldDiff`). The same value on both
/// sides agrees; a value changed on one side only takes that side; anything
/// else conflicts.
/// Written once so that the git merge driver, pull's field merge and `diff`
/// cannot come to disagree about which side changed what.
enum ThreeWay: Equatable {
    /// Both sides hold the same value (changed alike, or not at all).
    case same
    /// Only ours differs from the base.
    case ours
    /// Only theirs differs from the base.
    case theirs
    /// Both sides differ from the base and from each other.
    case conflict

    /// Classifies one value.
    /// - Parameters:
    ///   - base, ours, theirs: the value in each version; nil where it is absent.
    ///   - baseKnown: false when there is no base version at all (its copy is
    ///     missing, or the record is new on both sides): then nothing is known
    ///     to be one-sided, and only equal sides agree.
    init<T: Equatable>(base: T?, ours: T?, theirs: T?, baseKnown: Bool = true) {
        if ours == theirs {
            self = .same
        } else if baseKnown, ours == base {
            self = .theirs
        } else if baseKnown, theirs == base {
            self = .ours
        } else {
            self = .conflict
        }
    }

    /// The value a merge keeps: theirs where only they changed it, otherwise
    /// ours (on a conflict too, which is what a merge that keeps ours writes).
    func kept<T>(ours: T, theirs: T) -> T {
        self == .theirs ? theirs : ours
    }
}
