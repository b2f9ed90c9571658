import BooksyncCore

/// The members of a credentials file (or of an object inside one, such as
/// `credential_source`), read so that every complaint names the file, the
/// member's full path and what to do: a user who sees "has no audience"
/// must know which file and which object lack it.
struct CredentialsFileFields {
    let fields: Fields
    /// Where the file came from: "the credentials file /k.json (GOOGLE_APPLICATION_CREDENTIALS)".
    let origin: String
    /// The members' path inside the file, "" at the top, "credential_source." inside that object.
    let path: String
    /// What to do when a required member is missing, after a semicolon.
    let advice: String

    init(_ fields: Fields, origin: String, path: String = "", advice: String) {
        self.fields = fields
        self.origin = origin
        self.path = path
        self.advice = advice
    }

    /// True when the member is there, whatever its value (`null` included).
    func has(_ key: String) -> Bool { fields[key] != nil }

    /// A non-empty string member; a missing, empty or non-string one is nil,
    /// or an error when `required`.
    func string(_ key: String, required: Bool = true) throws(RemoteError) -> String? {
        if case .string(let value)? = fields[key], !value.isEmpty { return value }
        if required { throw .configuration("\(origin) has no \"\(path)\(key)\"; \(advice)") }
        return nil
    }

    /// An object member; missing is nil (an error when `required`), any other
    /// type an error.
    func object(_ key: String, required: Bool = false) throws(RemoteError) -> CredentialsFileFields? {
        switch fields[key] {
        case .map(let inner)?:
            return CredentialsFileFields(inner, origin: origin, path: path + key + ".", advice: advice)
        case nil, .null?:
            if required { throw .configuration("\(origin) has no \"\(path)\(key)\"; \(advice)") }
            return nil
        default:
            throw .configuration("\(origin): its \"\(path)\(key)\" must be a JSON object")
        }
    }

    /// An array of non-empty strings; missing or null is empty.
    func strings(_ key: String) throws(RemoteError) -> [String] {
        switch fields[key] {
        case nil, .null?:
            return []
        case .array(let items)?:
            var out: [String] = []
            for item in items {
                guard case .string(let text) = item, !text.isEmpty else {
                    throw .configuration("\(origin): its \"\(path)\(key)\" must be a list of strings")
                }
                out.append(text)
            }
            return out
        default:
            throw .configuration("\(origin): its \"\(path)\(key)\" must be a list of strings")
        }
    }

    /// An object whose members are all strings (HTTP headers); missing is empty.
    func stringMap(_ key: String) throws(RemoteError) -> [String: String] {
        guard let inner = try object(key) else { return [:] }
        var out: [String: String] = [:]
        for (name, value) in inner.fields {
            guard case .string(let text) = value else {
                throw .configuration("\(origin): its \"\(path)\(key).\(name)\" must be a string")
            }
            out[name] = text
        }
        return out
    }

    /// A URL member booksync will send a credential to (or receive one from):
    /// HTTPS, or plain HTTP to a loopback address, as a `token_uri` must be.
    /// Missing is `fallback`, else nil (an error when `required`).
    func url(_ key: String, required: Bool = true, default fallback: String? = nil) throws(RemoteError) -> String? {
        guard let url = try string(key, required: required && fallback == nil) ?? fallback else { return nil }
        try CredentialSources.checkURL(url, named: path + key, origin: origin)
        return url
    }
}
