import Synchronization
import Testing
import BooksyncURLSession
@testable import BooksyncCLI

/// How booksync reads its command line before any command runs: where the
/// command name is, which colour was asked for, what a typo is taken for.
@Suite struct CommandLineTests {
    /// One table of global options serves locating and parsing: an option's
    /// value is never taken for the command (`-C books help` once answered
    /// "'books' is not a booksync command").
    @Test(arguments: [
        (["status"], 0, nil),
        (["-C", "books", "help"], 2, nil),
        (["-C", "help", "status"], 2, nil),
        (["--color", "never", "-C", "dir", "status"], 4, "never"),
        (["--color=always", "pull"], 1, "always"),
        (["-q", "-C", "dir", "--no-color", "push", "--max-delete", "10%"], 4, "never"),
        (["--no-color", "--color", "always", "status"], 3, "always"),
        (["--color", "always", "--no-color", "status"], 3, "never"),
        (["status", "--color", "never"], 0, "never"),
        // After the command, its own options' values are skipped too.
        (["init", "--collection", "--color", "--no-color"], 0, "never"),
        (["-C", "dir"], nil, nil),
        (["--", "status"], nil, nil),
        (["-"], 0, nil),
    ] as [([String], Int?, String?)])
    func locatesTheCommandAndTheColour(arguments: [String], command: Int?, color: String?) {
        let located = BooksyncCommand.locateCommand(arguments)
        #expect(located.commandIndex == command, "\(arguments)")
        #expect(located.color == color, "\(arguments)")
    }

    /// Options are declared once and each command lists the ones it accepts:
    /// no two a command accepts (its own and the global ones) share a
    /// spelling, or the parser would take one for the other.
    @Test(arguments: BooksyncCommand.subcommands.map { ($0.name, $0.options) })
    func noTwoOptionsOfACommandShareASpelling(command: String, options: [Option]) {
        let spellings = (BooksyncCommand.globalOptions + options).flatMap(\.spellings)
        #expect(Set(spellings).count == spellings.count, "\(command): \(spellings)")
    }

    /// A command's usage line is written by hand (it groups `[--ours|--theirs]`):
    /// it names every option the command accepts, with its value.
    @Test(arguments: BooksyncCommand.subcommands.map { ($0.usage, $0.options) })
    func usageNamesEveryOption(usage: String, options: [Option]) {
        for option in options {
            let written = option.name + (option.value.map { " " + $0.name } ?? "")
            #expect(usage.contains(written + "]") || usage.contains(written + " ") || usage.contains(written + "|"), "\(usage): \(written)")
        }
    }

    /// The parser keeps every value of a repeated option in order (`value`
    /// is the last), flags by their declaration whatever the spelling, and
    /// what follows `--` as operands.
    @Test func parsedArgumentsKeepEveryValue() throws {
        let parsed = try ArgumentParser.parse(["--require", "a:string", "x", "--require=b:map", "-q", "--", "--require", "-"],
                                              options: BooksyncCommand.globalOptions + InitCommand.options, command: InitCommand.name)
        #expect(parsed.values(.require) == ["a:string", "b:map"])
        #expect(parsed.value(.require) == "b:map")
        #expect(parsed.has(.quiet))
        #expect(!parsed.has(.git))
        #expect(parsed.value(.collection) == nil)
        #expect(parsed.positionals == ["x", "--require", "-"])
    }

    /// `help` finds its topic past global options and their values, as the
    /// top level finds the command (it once took `dir` or `never` for the topic).
    @Test(arguments: [
        (["-C", "dir", "help"], "booksync \(BooksyncCommand.version): "),
        (["-C", "dir", "help", "status"], "usage: booksync status "),
        (["--color", "never", "help", "pull"], "usage: booksync pull "),
        (["help", "--color", "never", "push"], "usage: booksync push "),
        (["help", "-C", "dir", "--no-color", "validate"], "usage: booksync validate "),
    ])
    func helpFindsItsTopicPastGlobalOptions(arguments: [String], start: String) async {
        let result = await runBooksync(arguments, in: "/")
        #expect(result.exitCode == 0, "\(arguments): \(result.stderr)")
        #expect(result.stdout.hasPrefix(start), "\(arguments): \(result.stdout.prefix(80))")
    }

    /// `--no-color` is `--color never`, and the last colour option wins, for
    /// the console booksync really builds.
    @Test(arguments: [
        (["--no-color", "--version"], ColorChoice.never),
        (["--version", "--no-color"], .never),
        (["--color", "always", "--no-color", "--version"], .never),
        (["--no-color", "--color=always", "--version"], .always),
        (["--version"], .auto),
    ])
    func noColorChoosesNever(arguments: [String], expected: ColorChoice) async {
        let chosen = Mutex<ColorChoice?>(nil)
        let network = NetworkAccess.linked(make: { URLSessionTransport.make(requestTimeout: $0) })
        let code = await BooksyncCommand.run(arguments, environment: [:], currentDirectory: "/", network: network) { choice in
            chosen.withLock { $0 = choice }
            return Console(stdout: { _ in }, stderr: { _ in }, colorStdout: false, colorStderr: false)
        }
        #expect(code == 0)
        #expect(chosen.withLock { $0 } == expected, "\(arguments)")
    }

    @Test(arguments: [
        ("status", "status", 0), ("stauts", "status", 1), ("sttaus", "status", 1), ("stat", "status", 2),
        ("pul", "pull", 1), ("psuh", "push", 1), ("", "fmt", 3), ("kitten", "sitting", 3), ("ca", "abc", 3),
        ("über", "uber", 1),
    ])
    func damerauLevenshteinDistance(a: String, b: String, distance: Int) {
        #expect(Suggestions.distance(Array(a.unicodeScalars), Array(b.unicodeScalars)) == distance, "\(a) → \(b)")
        #expect(Suggestions.distance(Array(b.unicodeScalars), Array(a.unicodeScalars)) == distance, "\(b) → \(a)")
    }

    static let commands = ["init", "status", "diff", "pull", "push", "sync", "resolve", "validate", "fmt", "merge-file", "merge-manifest", "help"]

    @Test(arguments: [
        ("stauts", ["status"]),
        ("statsu", ["status"]),
        ("stat", ["status"]),
        ("pu", ["pull", "push"]),
        ("pul", ["pull"]),
        ("psh", ["push"]),
        ("puhs", ["push"]),
        ("snyc", ["sync"]),
        ("valdate", ["validate"]),
        ("reslove", ["resolve"]),
        ("merge", ["merge-file", "merge-manifest"]),
        ("fnt", ["fmt"]),
        // Too far for a short word, or nothing alike: no guess.
        ("ls", []),
        ("x", []),
        ("frobnicate", []),
        ("commit", []),
        (String(repeating: "s", count: 1_000), []),
    ])
    func suggestsTheClosestCommands(typed: String, expected: [String]) {
        #expect(Suggestions.closest(to: typed, among: Self.commands) == expected, "\(typed)")
    }

    @Test func didYouMeanReadsAsASentence() {
        #expect(Suggestions.didYouMean("stauts", among: Self.commands) == "; did you mean 'status'?")
        #expect(Suggestions.didYouMean("pu", among: Self.commands) == "; did you mean 'pull' or 'push'?")
        #expect(Suggestions.didYouMean("a", among: ["ab", "ac", "ad"]) == "; did you mean 'ab', 'ac' or 'ad'?")
        #expect(Suggestions.didYouMean("frobnicate", among: Self.commands) == "")
    }

    /// Usage errors name the option as declared, whichever spelling was typed,
    /// and the command whose help to read.
    @Test(arguments: [
        (["pull", "--max-delete"], "booksync pull: option '--max-delete' needs a value (N%)"),
        (["-C"], "booksync: option '-C' needs a value (DIR)"),
        (["push", "--dry-run=yes"], "booksync push: option '--dry-run' takes no value"),
        (["--quiet=1", "status"], "booksync status: option '--quiet' takes no value"),
        (["status", "-s", "--json"], "booksync status: --short and --json cannot be combined"),
        (["resolve", "b1", "--theirs", "--ours"], "booksync resolve: --ours and --theirs cannot be combined"),
        (["sync", "--ours", "--theirs"], "booksync sync: --ours and --theirs cannot be combined"),
        (["verify", "extra"], "booksync verify: unexpected argument 'extra'"),
        (["init", "--git", "one", "two"], "booksync init: init takes at most one DIR"),
        (["push", "--max-delete", "101%"], "booksync push: --max-delete takes a percentage from 0 to 100, like 25%"),
        (["--progress", "fancy", "status"], "booksync status: --progress takes auto or bar or plain or none"),
    ])
    func usageErrorsNameTheDeclaredOption(arguments: [String], message: String) async {
        let result = await runBooksync(arguments, in: "/")
        #expect(result.exitCode == 2)
        #expect(result.stderr.split(separator: "\n").first.map(String.init) == message, "\(result.stderr)")
    }

    /// `--progress` wins, then `-q`, then `BOOKSYNC_PROGRESS`; a variable that
    /// is not one of the words is named in a warning and ignored, so it cannot
    /// break `--version`, completions or git's merge drivers.
    @Test(arguments: [
        (["--version"], "plain", ProgressChoice.plain, false),
        (["-q", "--version"], "plain", .none, false),
        (["-q", "--progress", "plain", "--version"], "none", .plain, false),
        (["--progress", "bar", "--version"], "plain", .bar, false),
        (["--version"], "", .auto, false),
        (["--version"], "loud", .auto, true),
    ])
    func theProgressChoiceOrder(arguments: [String], variable: String, expected: ProgressChoice, warns: Bool) throws {
        let parsed = try ArgumentParser.parse(arguments, options: BooksyncCommand.globalOptions, command: nil, exclusive: [])
        let warnings = Mutex<[UInt8]>([])
        let console = Console(stdout: { _ in }, stderr: { bytes in warnings.withLock { $0 += bytes } }, colorStdout: false, colorStderr: false)
        #expect(BooksyncCommand.progressChoice(parsed, environment: ["BOOKSYNC_PROGRESS": variable], console: console) == expected, "\(arguments)")
        let warning = String(decoding: warnings.withLock { $0 }, as: UTF8.self)
        #expect(warning == (warns ? "booksync: warning: ignoring BOOKSYNC_PROGRESS='loud': it takes auto, bar, plain or none\n" : ""))
    }

    @Test func aWrongProgressVariableStillRunsTheCommand() async {
        let result = await runBooksync(["--version"], in: "/", environment: ["BOOKSYNC_PROGRESS": "loud"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("booksync "))
    }

    /// Options get suggestions from the command's table and the global one.
    @Test(arguments: [
        (["status", "--ofline"], "booksync status: unknown option '--ofline'; did you mean '--offline'?"),
        (["push", "--dryrun"], "booksync push: unknown option '--dryrun'; did you mean '--dry-run'?"),
        (["pull", "--max-delte=5%"], "booksync pull: unknown option '--max-delte'; did you mean '--max-delete'?"),
        (["status", "--no-colour"], "booksync status: unknown option '--no-colour'; did you mean '--no-color'?"),
        (["status", "--bogus"], "booksync status: unknown option '--bogus'"),
        (["status", "-x"], "booksync status: unknown option '-x'"),
        (["-C", "books", "stauts"], "booksync: 'stauts' is not a booksync command; did you mean 'status'?"),
        (["help", "-C", "books", "stauts"], "booksync: 'stauts' is not a booksync command; did you mean 'status'?"),
    ])
    func mistypedOptionsAndCommandsGetASuggestion(arguments: [String], message: String) async {
        let result = await runBooksync(arguments, in: "/")
        #expect(result.exitCode == 2)
        #expect(result.stderr.split(separator: "\n").first.map(String.init) == message, "\(result.stderr)")
    }
}
