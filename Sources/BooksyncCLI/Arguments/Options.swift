import BooksyncCore

/// One option of booksync's command line, declared once in the table below:
/// how it is written, the value it takes and its help.
///
/// Everything that knows options reads these declarations: the parser, the
/// search for the command name past global options and their values
/// (`BooksyncCommand.locateCommand`), usage errors, `--help`, "did you mean"
/// and the shell completion scripts. A command lists the options it accepts
/// (`Subcommand.options`, global ones in `BooksyncCommand.globalOptions`) and
/// asks `ParsedArguments` for them by declaration, never by string.
struct Option: Sendable {
    /// How it is written: `--color`, or `-C` for an option that has only a one-letter name.
    let name: String
    /// The one-letter spelling of a long option: `q` for `--quiet`.
    let alias: Character?
    /// What follows the option; nil for a flag.
    let value: Value?
    /// Its line in `--help`, and its description in the completion scripts.
    let help: String

    /// The value an option takes: its name in help (`DIR`, `N%`), and what a shell can offer for it.
    enum Value: Sendable, Equatable {
        /// A directory: the shell offers directories.
        case directory(String)
        /// One of a fixed set of words, which the option's reader checks: the shell offers them.
        case choice(String, [String])
        /// Free text the shell cannot guess: nothing is offered.
        case text(String)
        /// A percentage from 0 to 100 (`25%`, the `%` optional), checked by the parser.
        case percentage(String)

        /// The value's name in help: `DIR`, `WHEN`, `N%`.
        var name: String {
            switch self {
            case .directory(let name), .choice(let name, _), .text(let name), .percentage(let name): name
            }
        }

        /// Why `text` is not a value of this kind; nil when it is (or the kind takes any text).
        func problem(with text: String) -> String? {
            switch self {
            case .percentage: DeleteGuard.parsePercent(text) == nil ? "takes a percentage from 0 to 100, like 25%" : nil
            case .choice(_, let words): words.contains(text) ? nil : "takes " + words.joined(separator: " or ")
            case .directory, .text: nil
            }
        }
    }

    init(_ name: String, alias: Character? = nil, value: Value? = nil, help: String) {
        self.name = name
        self.alias = alias
        self.value = value
        self.help = help
    }

    /// The same option with the help one command words for it (`--json` says
    /// what it prints in each command).
    func explained(_ help: String) -> Option {
        Option(name, alias: alias, value: value, help: help)
    }

    /// `--color`; nil for an option that has only a one-letter name (`-C`).
    var long: String? { name.hasPrefix("--") ? name : nil }

    /// `q` for `--quiet`, `C` for `-C`; nil for a long option without an alias.
    var letter: Character? { alias ?? (long == nil ? name.dropFirst().first : nil) }

    /// Every spelling of the option on a command line: `-q`, `--quiet`.
    var spellings: [String] { (letter.map { ["-\($0)"] } ?? []) + (long.map { [$0] } ?? []) }

    /// Whether `word` (`--quiet`, `-q`, without any `=VALUE`) names this option.
    func isSpelled(_ word: String) -> Bool { spellings.contains(word) }
}

extension Option: Equatable {
    /// The same option, however a command words its help.
    static func == (lhs: Option, rhs: Option) -> Bool { lhs.name == rhs.name }
}

extension Option {
    // Global: before or after the command name.
    static let directory = Option("-C", value: .directory("DIR"), help: "run as if booksync was started in DIR")
    static let color = Option("--color", value: .choice("WHEN", ColorChoice.allCases.map(\.rawValue)),
                              help: "colour output: auto (default, only on a terminal), always, never")
    static let noColor = Option("--no-color", help: "the same as --color never")
    static let progress = Option("--progress", value: .choice("HOW", ProgressChoice.allCases.map(\.rawValue)),
                                 help: "show long transfers: auto (a bar on a terminal, lines in a log), bar, plain or none (default BOOKSYNC_PROGRESS, else auto)")
    static let quiet = Option("--quiet", alias: "q", help: "print only results and errors")
    static let verbose = Option("--verbose", alias: "v", help: "explain what booksync is doing, on stderr")
    static let help = Option("--help", alias: "h", help: "show help")
    static let version = Option("--version", help: "print the version")

    // status, diff, validate and the sync commands (each words --offline and --json for itself).
    static let offline = Option("--offline", help: "do not contact the remote; report local changes only")
    static let json = Option("--json", help: "print a JSON document (see the Commands article of the docs)")
    static let short = Option("--short", alias: "s", help: "one line per record: two status columns and the id")
    static let exitCode = Option("--exit-code", help: "exit 1 when anything differs from the base")
    static let remote = Option("--remote", value: .text("NAME"), help: "work with this remote and its own sync state (default origin; see 'booksync remote')")
    static let full = Option("--full", help: "list every remote name, even where the change field would find the changes")
    static let repair = Option("--repair", help: "forget the base of each record found, so that pull compares both sides again")

    // pull, push, sync; --ours and --theirs also resolve.
    static let dryRun = Option("--dry-run", alias: "n", help: "print the plan; write nothing, locally or remotely")
    static let ours = Option("--ours", help: "settle conflicts with our value of each conflicting field (push publishes it)")
    static let theirs = Option("--theirs", help: "settle conflicts with their value of each conflicting field")
    static let atomic = Option("--atomic", help: "push all changes in one transaction, or none (at most 500)")
    static let maxDelete = Option("--max-delete", value: .percentage("N%"), help: "refuse to delete more than N% of the synced records (default 50%)")
    static let force = Option("--force", help: "skip the mass-delete guard")

    // seed
    static let deleteOthers = Option("--delete", help: "also delete the remote documents that have no record file (within --max-delete)")

    // fmt
    static let check = Option("--check", help: "change nothing; list files that are not canonical and exit 1 if any")

    // init
    static let firestore = Option("--firestore", value: .text("PROJECT[/DATABASE]"), help: "the Firestore project (and database) to sync with")
    static let collection = Option("--collection", value: .text("PATH"), help: "the collection path, e.g. books or users/u1/books")
    static let require = Option("--require", value: .text("FIELD:TYPE"), help: "a field every record must have (repeatable), or none for only id")
    static let idField = Option("--id-field", value: .text("NAME|none"), help: "the document field that holds the record id (default id), or none")
    static let scope = Option("--where", value: .text("EXPR"), help: "mirror only the documents that match, e.g. 'rating >= 4 and genre == \"sf\"'")
    static let changeField = Option("--change-field", value: .text("NAME"), help: "a field every write sets to the server time, so status reads only the changes")
    static let subcollection = Option("--subcollection", value: .text("PATH"), help: "also sync this subcollection as folders, e.g. reviews or reviews/likes (repeatable)")
    static let subcollectionRequire = Option("--subcollection-require", value: .text("PATH:FIELD:TYPE"), help: "a field every record of that subcollection must have (repeatable)")
    // remote add
    static let emulator = Option("--emulator", help: "the remote is the emulator at FIRESTORE_EMULATOR_HOST")
    static let emulatorHost = Option("--emulator-host", value: .text("HOST:PORT"), help: "the remote is the emulator at this loopback address")
    static let localState = Option("--local", help: "keep the remote's sync state on this machine only (default for the emulator)")
    static let sharedState = Option("--shared", help: "commit the remote's sync state (default for production)")
    static let optional = Option("--optional", value: .text("FIELD:TYPE"), help: "a field records may have, checked when present (repeatable)")
    static let strict = Option("--strict", value: .choice("warning|error", ["warning", "error"]), help: "what fields the schema does not declare mean: a warning from validate, or an error")
    static let editor = Option("--editor", value: .choice("vscode", ["vscode"]), help: "map the record files to their JSON Schema in the editor's workspace settings")
    static let printSchema = Option("--print", help: "print the JSON Schema instead of writing it")
    static let swiftType = Option("--swift", value: .text("TYPE"), help: "print a Codable Swift struct TYPE for the records")
    static let git = Option("--git", help: "set up booksync as git's merge driver for the record files and the manifest")
}
