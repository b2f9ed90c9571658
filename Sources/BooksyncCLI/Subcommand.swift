import BooksyncCore
@_spi(Remote) import BooksyncKit

/// One subcommand: its help and its behaviour.
protocol Subcommand {
    static var name: String { get }
    static var summary: String { get }
    static var usage: String { get }
    /// Longer explanation shown by `--help`.
    static var discussion: String { get }
    /// The options it accepts besides the global ones, in the order its help lists them.
    static var options: [Option] { get }
    /// Pairs of its options that cannot be given together: the parser refuses
    /// them, so every usage error is found before anything is opened, handed
    /// to the network helper, or run in each collection of a workspace.
    static var exclusiveOptions: [(Option, Option)] { get }
    /// What follows the options, for shell completion (default: nothing to offer).
    static var operands: Operands { get }
    static func run(_ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode
    /// Whether this command line talks to a remote: then `booksync`, which
    /// links no network, hands it to `booksync-network` right after parsing
    /// (`NetworkAccess`), before anything is opened, read or written.
    static func reachesRemote(_ arguments: ParsedArguments) -> Bool
}

extension Subcommand {
    /// Local commands by default.
    static func reachesRemote(_ arguments: ParsedArguments) -> Bool { false }

    /// No exclusive options by default.
    static var exclusiveOptions: [(Option, Option)] { [] }
}
