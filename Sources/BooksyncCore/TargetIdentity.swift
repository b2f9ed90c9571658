/// Which remote collection a base was recorded against: the endpoint (the
/// emulator, production Firestore, or another deployment's URL) and the
/// collection's full name. A manifest records it, so that the base of one
/// target is never applied to another (README, "Remotes and environments").
///
/// The emulator is one endpoint whatever its port: scripts start it on a free
/// port each time, and its data is gone after a restart anyway, which the
/// emptied-target guard of pull catches. Any other URL is its own endpoint.
public struct TargetIdentity: Sendable, Hashable, CustomStringConvertible {
    /// `emulator`, or a base URL such as `https://firestore.googleapis.com/v1/`.
    public let endpoint: String
    /// `projects/P/databases/D/documents/C`.
    public let collection: String

    /// The endpoint word of every emulator.
    public static let emulator = "emulator"

    /// An identity; `endpoint` has no space (a URL never does).
    public init(endpoint: String, collection: String) {
        self.endpoint = endpoint
        self.collection = collection
    }

    /// The identity of `target` on the emulator, or at `baseURL`.
    public init(target: FirestoreTarget, emulator: Bool, baseURL: String) {
        self.init(endpoint: emulator ? Self.emulator : baseURL, collection: target.documentsRoot + "/" + target.collectionPath)
    }

    /// As the manifest stores it: `emulator projects/p/databases/(default)/documents/books`.
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
    public var isEmulator: Bool { endpoint == Self.emulator }

    /// For messages: `projects/p/databases/(default)/documents/books on the emulator`
    /// or `… at https://firestore.googleapis.com/v1/`.
    public var description: String {
        collection + (isEmulator ? " on the emulator" : " at " + endpoint)
    }
}
