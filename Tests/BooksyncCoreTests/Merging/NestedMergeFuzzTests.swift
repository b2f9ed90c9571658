import Testing
import BooksyncTestSupport
@testable import BooksyncCore

/// The nested merge rules on random records: edits made by the two sides at
/// paths where neither is inside the other always merge into exactly both
/// edits; the same path set differently is a conflict at that path and
/// nowhere else. Deterministic seeds, so a failure reproduces.
@Suite struct NestedMergeFuzzTests {
    /// One side's edit: set (or with nil delete) the value at `path`.
    struct Edit {
        let path: FieldPath
        let value: Value?
    }

    static let keys = ["a", "b", "c.d", "", "é", "x`"]

    static func randomFields(_ random: inout SplitMix64, depth: Int) -> Fields {
        var fields: Fields = [:]
        for key in keys where random.below(3) > 0 {
            fields[key] = depth < 3 && random.below(3) == 0
                ? .map(randomFields(&random, depth: depth + 1))
                : .integer(Int64(random.below(5)))
        }
        return fields
    }

    /// Every path in `fields`, maps and the values inside them alike.
    static func paths(_ fields: Fields, under parent: FieldPath? = nil) -> [(FieldPath, Value)] {
        fields.flatMap { key, value -> [(FieldPath, Value)] in
            let path = parent?.appending(key) ?? FieldPath(field: key)
            if case .map(let inner) = value { return [(path, value)] + paths(inner, under: path) }
            return [(path, value)]
        }
    }

    static func isPrefix(_ a: FieldPath, of b: FieldPath) -> Bool {
        a.segments.count <= b.segments.count && zip(a.segments, b.segments).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
    }

    static func related(_ a: FieldPath, _ b: FieldPath) -> Bool { isPrefix(a, of: b) || isPrefix(b, of: a) }

    /// A random edit of `base`: delete a path, set a value to a new integer or
    /// a map, or add a key to a map that exists.
    static func randomEdit(_ random: inout SplitMix64, base: Fields) -> Edit {
        let existing = paths(base)
        let value = Value.integer(Int64(10 + random.below(1000)))
        guard !existing.isEmpty else { return Edit(path: FieldPath(field: "new"), value: value) }
        let (path, old) = existing[random.below(existing.count)]
        switch random.below(4) {
        case 0: return Edit(path: path, value: nil)
        case 1: return Edit(path: path, value: .map(["z": value]))
        case 2:
            if case .map = old { return Edit(path: path.appending("new\(random.below(3))"), value: value) }
            return Edit(path: path, value: value)
        default: return Edit(path: path, value: value)
        }
    }

    static func apply(_ edits: [Edit], to fields: Fields) -> Fields {
        var result = fields
        for edit in edits { edit.path.set(edit.value, in: &result) }
        return result
    }

    /// Up to four edits, none of them at or inside another's path, nor at or inside `avoiding`.
    static func unrelatedEdits(_ random: inout SplitMix64, base: Fields, avoiding: [FieldPath]) -> [Edit] {
        var edits: [Edit] = []
        for _ in 0..<(1 + random.below(4)) {
            let edit = randomEdit(&random, base: base)
            if !(avoiding + edits.map(\.path)).contains(where: { related($0, edit.path) }) { edits.append(edit) }
        }
        return edits
    }

    @Test(arguments: 0..<200)
    func unrelatedEditsMergeIntoBoth(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let base = Self.randomFields(&random, depth: 0)
        let local = Self.unrelatedEdits(&random, base: base, avoiding: [])
        let remote = Self.unrelatedEdits(&random, base: base, avoiding: local.map(\.path))
        let expected = Self.apply(local + remote, to: base)
        let (merged, conflicts) = FieldMerge.mergeKeepingLocal(base: base, local: Self.apply(local, to: base), remote: Self.apply(remote, to: base))
        #expect(conflicts == [], "seed \(seed)")
        #expect(merged == expected, "seed \(seed)")
    }

    @Test(arguments: 0..<200)
    func theSamePathSetDifferentlyConflictsThereOnly(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let base = Self.randomFields(&random, depth: 0)
        let shared = Self.randomEdit(&random, base: base)
        let ours = Edit(path: shared.path, value: .string("ours")), theirs = Edit(path: shared.path, value: .string("theirs"))
        let local = Self.unrelatedEdits(&random, base: base, avoiding: [shared.path])
        let remote = Self.unrelatedEdits(&random, base: base, avoiding: [shared.path] + local.map(\.path))
        let merge = RecordMerge(base: base, local: Self.apply(local + [ours], to: base), remote: Self.apply(remote + [theirs], to: base))
        #expect(merge.conflicts == [shared.path], "seed \(seed)")
        #expect(merge.keepingLocal == Self.apply(local + remote + [ours], to: base), "seed \(seed)")
        #expect(merge.keepingRemote == Self.apply(local + remote + [theirs], to: base), "seed \(seed)")
    }
}
