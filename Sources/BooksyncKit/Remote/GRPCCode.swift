/// The canonical gRPC status codes, as Firestore reports them: by name in the
/// `status` of an error answer (`"FAILED_PRECONDITION"`) and by number in the
/// `code` of a per-write status of `:batchWrite` (`9`). One table for both, so
/// the remote never compares a bare number or spells a name twice.
enum GRPCCode: Int, CaseIterable, Sendable {
    case ok = 0
    case cancelled = 1
    case unknown = 2
    case invalidArgument = 3
    case deadlineExceeded = 4
    case notFound = 5
    case alreadyExists = 6
    case permissionDenied = 7
    case resourceExhausted = 8
    case failedPrecondition = 9
    case aborted = 10
    case outOfRange = 11
    case unimplemented = 12
    case `internal` = 13
    case unavailable = 14
    case dataLoss = 15
    case unauthenticated = 16

    /// The code named by a `status` string (`"ABORTED"`); nil for any other text.
    init?(name: String) {
        guard let code = Self.byName[name] else { return nil }
        self = code
    }

    /// The code of a numeric `code` (`10`); nil for a number outside the table.
    init?(number: Int64) {
        guard let exact = Int(exactly: number), let code = GRPCCode(rawValue: exact) else { return nil }
        self = code
    }

    /// The name Firestore writes in a `status` field.
    var name: String {
        switch self {
        case .ok: "OK"
        case .cancelled: "CANCELLED"
        case .unknown: "UNKNOWN"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .deadlineExceeded: "DEADLINE_EXCEEDED"
        case .notFound: "NOT_FOUND"
        case .alreadyExists: "ALREADY_EXISTS"
        case .permissionDenied: "PERMISSION_DENIED"
        case .resourceExhausted: "RESOURCE_EXHAUSTED"
        case .failedPrecondition: "FAILED_PRECONDITION"
        case .aborted: "ABORTED"
        case .outOfRange: "OUT_OF_RANGE"
        case .unimplemented: "UNIMPLEMENTED"
        case .internal: "INTERNAL"
        case .unavailable: "UNAVAILABLE"
        case .dataLoss: "DATA_LOSS"
        case .unauthenticated: "UNAUTHENTICATED"
        }
    }

    private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

    /// A guarded write refused because the document is not as its precondition
    /// said (gone, already there, another revision): the remote changed since
    /// the base, which the engine settles by fetching the document.
    var isPreconditionFailure: Bool {
        switch self {
        case .notFound, .alreadyExists, .failedPrecondition: true
        default: false
        }
    }

    /// A write that failed for a passing reason (overload, a lost race, a
    /// timeout inside Firestore) and may simply be sent again.
    var isTransientWriteFailure: Bool {
        switch self {
        case .deadlineExceeded, .resourceExhausted, .aborted, .internal, .unavailable: true
        default: false
        }
    }
}
