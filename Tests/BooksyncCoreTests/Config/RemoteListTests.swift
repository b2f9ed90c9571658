import Testing
@testable import BooksyncCore

/// The remotes file, the target a manifest records, and how a merge treats two targets.
@Suite struct RemoteListTests {
    static let production = TargetIdentity(endpoint: "https://firestore.googleapis.com/v1/", collection: "projects/p/databases/(default)/documents/books")
    static let emulator = TargetIdentity(endpoint: "emulator@127.0.0.1:8080", collection: "projects/p/databases/(default)/documents/books")

    @Test func aRemotesFileRoundTrips() throws {
        let list = RemoteList([
            RemoteDefinition(name: "staging", target: FirestoreTarget(project: "p-staging", collectionPath: "books"), endpoint: .production, sharesState: true),
            RemoteDefinition(name: "emu", target: FirestoreTarget(project: "demo", database: "db2", collectionPath: "users/u1/books"),
                             endpoint: .emulator(host: "127.0.0.1:8080"), sharesState: false),
        ])
        #expect(list.remotes.map(\.name) == ["emu", "staging"], "sorted by name")
        #expect(try RemoteList.decode(list.encoded()) == list)
    }

    /// Each refusal names the remote and what to do. A committed file may not
    /// send the user's token anywhere but production, nor reach a non-loopback emulator.
    @Test(arguments: [
        (#"{"version": 1, "remotes": {"x": {"project": "p", "collection": "books", "endpoint": "https://evil.example/v1/"}}}"#, "never from a committed file"),
        (#"{"version": 1, "remotes": {"x": {"project": "p", "collection": "books", "endpoint": "emulator", "emulatorHost": "10.1.2.3:8080"}}}"#, "not a loopback address"),
        (#"{"version": 1, "remotes": {"x": {"project": "p", "collection": "books", "endpoint": "emulator", "emulatorHost": "127.0.0.1"}}}"#, "must be HOST:PORT"),
        (#"{"version": 1, "remotes": {"../up": {"project": "p", "collection": "books"}}}"#, "must start with a letter or digit"),
        (#"{"version": 1, "remotes": {"origin": {"project": "p", "collection": "books"}}}"#, "'origin' is config.json's remote"),
        (#"{"version": 1, "remotes": {"x": {"project": "p/q", "collection": "books"}}}"#, "contains '/'"),
        (#"{"version": 1, "remotes": {"x": {"project": "p", "collection": "books/b1"}}}"#, "names a document"),
        (#"{"version": 1, "remotes": {"x": {"project": "p", "collection": "books", "state": "both"}}}"#, "\"state\" must be"),
        (#"{"version": 2, "remotes": {}}"#, "\"version\" must be 1"),
        (#"{"version": 1, "remotes": {"x": {"project": "p", "collection": "books", "endpoint": "emulator", "state": "shared"}}}"#, "an emulator's sync state is local"),
        // State folders are named after remotes; macOS ignores case.
        (#"{"version": 1, "remotes": {"staging": {"project": "p", "collection": "c"}, "Staging": {"project": "q", "collection": "c"}}}"#, "only in letter case"),
        (#"{"version": 1, "remotes": {"Emulator": {"project": "p", "collection": "c", "endpoint": "emulator"}}}"#, "differs from 'emulator' only in letter case"),
        (#"{"version": 1, "remotes": {"ORIGIN": {"project": "p", "collection": "c"}}}"#, "differs from 'origin' only in letter case"),
        // `--remote emulator` means an emulator: a clone cannot point it at production.
        (#"{"version": 1, "remotes": {"emulator": {"project": "p", "collection": "c", "endpoint": "production"}}}"#,
         "remote 'emulator': the name 'emulator' is reserved for the Firestore emulator (--remote emulator always means one), "
            + "but this one names production Firestore; give it \"endpoint\": \"emulator\", or another name"),
        (#"{"version": 1, "remotes": {"emulator": {"project": "p", "collection": "c", "state": "local"}}}"#, "reserved for the Firestore emulator"),
    ])
    func badRemotesAreRefused(text: String, expected: String) {
        #expect(throws: StateFileError.self) { try RemoteList.decode(Array(text.utf8)) }
        do {
            _ = try RemoteList.decode(Array(text.utf8))
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func aRemoteCalledEmulatorIsAnEmulator() throws {
        let text = #"{"version": 1, "remotes": {"emulator": {"project": "p", "collection": "c", "endpoint": "emulator", "emulatorHost": "127.0.0.1:8080"}}}"#
        #expect(try RemoteList.decode(Array(text.utf8))["emulator"]?.endpoint == .emulator(host: "127.0.0.1:8080"))
        #expect(RemoteList.problem(withName: "emulator", endpoint: .emulator(host: nil)) == nil)
        #expect(RemoteList.problem(withName: "staging", endpoint: .production) == nil)
    }

    @Test func stateDefaultsToSharedForProductionAndLocalForTheEmulator() throws {
        let text = #"{"version": 1, "remotes": {"a": {"project": "p", "collection": "c"}, "b": {"project": "p", "collection": "c", "endpoint": "emulator"}}}"#
        let list = try RemoteList.decode(Array(text.utf8))
        #expect(list["a"]?.sharesState == true)
        #expect(list["b"]?.sharesState == false)
        #expect(list["b"]?.endpoint == .emulator(host: nil))
    }

    /// The target survives both decoders: the line-by-line fast path and the full parser.
    @Test func aManifestKeepsItsTarget() throws {
        let manifest = Manifest(entries: [RecordID(validated: "dune"): BaseEntry(hash: ContentHash(text: "sha256:" + String(repeating: "a", count: 64)), revision: "2024-01-01T00:00:00.000001Z")],
                                configFingerprint: "sha256:c", target: Self.production)
        let bytes = manifest.encoded()
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""target": "https://firestore.googleapis.com/v1/ projects/p/databases/(default)/documents/books","#))
        var canonical = CanonicalManifestDecoder()
        #expect(bytes.withUnsafeBufferPointer { canonical.feed($0) })
        #expect(canonical.finish() == manifest)
        var spaced = bytes
        spaced.insert(0x20, at: 1)  // not canonical any more: the full parser reads it
        #expect(try Manifest.decode(spaced) == manifest)
        #expect(throws: StateFileError.self) { try Manifest.decode(Array(#"{"version": 1, "target": "nospace", "records": {}}"#.utf8)) }
    }

    @Test(arguments: [
        (nil, nil, nil as TargetIdentity?),
        (production, nil, production),
        (nil, emulator, emulator),
        (production, production, production),
    ] as [(TargetIdentity?, TargetIdentity?, TargetIdentity?)])
    func aMergeKeepsTheOneTarget(ours: TargetIdentity?, theirs: TargetIdentity?, merged: TargetIdentity?) {
        let result = ManifestMerge.merge(base: Manifest(), ours: Manifest(target: ours), theirs: Manifest(target: theirs))
        #expect(result.isClean)
        #expect(result.manifest.target == merged)
    }

    /// Entries recorded against two targets say nothing about each other: ours is kept whole, and the merge is not clean.
    @Test func aMergeOfTwoTargetsKeepsOursAndSaysSo() {
        let id = RecordID(validated: "dune")
        let ours = Manifest(entries: [id: BaseEntry(hash: "sha256:1", revision: "r1")], target: Self.production)
        let theirs = Manifest(entries: [id: BaseEntry(hash: "sha256:2", revision: "r2")], target: Self.emulator)
        let result = ManifestMerge.merge(base: Manifest(), ours: ours, theirs: theirs)
        #expect(!result.isClean)
        #expect(result.manifest == ours)
        #expect(result.targetConflict?.theirs == Self.emulator)
    }

    @Test func anIdentityReadsBackAndDescribesItself() {
        #expect(TargetIdentity(rawValue: Self.emulator.rawValue) == Self.emulator)
        #expect(Self.emulator.description == "projects/p/databases/(default)/documents/books on the emulator at 127.0.0.1:8080")
        #expect(Self.emulator.emulatorHost == "127.0.0.1:8080")
        #expect(Self.production.description.hasSuffix(" at https://firestore.googleapis.com/v1/"))
        #expect(Self.production.emulatorHost == nil)
        #expect(TargetIdentity(rawValue: "emulator") == nil)
        let target = FirestoreTarget(project: "p", collectionPath: "books")
        #expect(TargetIdentity(target: target, emulator: true, baseURL: "http://127.0.0.1:8080/v1/") == Self.emulator)
        #expect(TargetIdentity(target: target, emulator: true, baseURL: "http://127.0.0.1:8081/v1/") != Self.emulator,
                "two emulators may hold different data: each port is its own target")
    }
}
