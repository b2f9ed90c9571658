/// Which remote collection a base was recorded against: the endpoint (the
/// emulator, production Firestore, or another deployment's URL) and the
/// collection's full name. A manifest records it, so that the base of one
/// target is never applied to another (the manual's RemotesAndTargets article).
///
/// An emulator is named by its host and port (`emulator@127.0.0.1:8080`):
/// two emulators, or one restarted on another port, may hold different data
/// (an `--import`, a teammate's), so one's base is never applied to the
/// other. A restart on the same port that lost its data is what the
/// emptied-target guard of pull catches.
public struct TargetIdentity: Sendable, Hashable, CustomStringConvertible {
    /// `emulator@HOST:PORT`, or a base URL such as `https://firestore.googleapis.com/v1/`.
    public let endpoint: String
    /// `projects/P/databases/D/documents/C`.
    public let collection: String

    /// The prefix of every emulator's endpoint, before `@HOST:PORT`.
    package static let emulatorPrefix = "emulator@"

    /// An identity; `endpoint` has no space (a URL never does).
    public init(endpoint: String, collection: String) {
        self.endpoint = endpoint
        self.collection = collection
    }

    /// The identity of `target` at `baseURL`, which for the emulator is `http://HOST:PORT/v1/`.
    package init(target: FirestoreTarget, emulator: Bool, baseURL: String) {
        var endpoint = baseURL
        if emulator {
            let authority = baseURL.drop { $0 != "/" }.drop { $0 == "/" }.prefix { $0 != "/" }
            endpoint = Self.emulatorPrefix + authority
        }
        self.init(endpoint: endpoint, collection: target.documentsRoot + "/" + target.collectionPath)
    }

    /// As the manifest stores it: `emulator@127.0.0.1:8080 projects/p/databases/(default)/documents/books`.
    public var rawValue: String { endpoint + " " + collection }

    /// Reads `rawValue` back; nil when it has no space or an empty part.
    public init?(rawValue: String) {
        guard let space = rawValue.firstIndex(of: " ") else { return nil }
        let endpoint = String(rawValue[..<space])
        let collection = String(rawValue[rawValue.index(after: space)...])
        guard !endpoint.isEmpty, !collection.isEmpty else { return nil }
        self.init(endpoint: endpoint, collection: collection)
    }

    /// True for the emulator, whatever its host.
    public var isEmulator: Bool { endpoint.hasPrefix(Self.emulatorPrefix) }

    /// `HOST:PORT` of an emulator; nil for any other endpoint.
    public var emulatorHost: String? { isEmulator ? String(endpoint.dropFirst(Self.emulatorPrefix.count)) : nil }

    /// For messages: `projects/p/databases/(default)/documents/books on the emulator at 127.0.0.1:8080`
    /// or `… at https://firestore.googleapis.com/v1/`.
    public var description: String {
        collection + (emulatorHost.map { " on the emulator at " + $0 } ?? " at " + endpoint)
    }
}
