import BooksyncCore

/// A command line read against its declared options (`Option`): the flags
/// given, every value of each option in order, and the operands.
struct ParsedArguments: Sendable {
    /// The command these arguments are for (nil at the top level), named by usage errors.
    let command: String?
    private var flags: Set<String> = []
    private var values: [String: [String]] = [:]
    /// What is not an option or an option's value, in order.
    private(set) var positionals: [String] = []

    init(command: String?) {
        self.command = command
    }

    /// Whether the flag `option` was given.
    func has(_ option: Option) -> Bool { flags.contains(option.name) }

    /// The value of `option`: the last one given, so a later `--color` overrides an earlier one.
    func value(_ option: Option) -> String? { values[option.name]?.last }
    /// The percentage of a `.percentage` option (the parser checked it).
    func percentage(_ option: Option) -> Double? { value(option).flatMap { DeleteGuard.parsePercent($0) } }

    /// Every value of a repeatable option (`--require`), in command-line order.
    func values(_ option: Option) -> [String] { values[option.name] ?? [] }

    /// A usage mistake in these arguments, reported against their command.
    func usageError(_ message: String) -> UsageError {
        UsageError(message: message, command: command)
    }

    /// - Throws: `UsageError` naming the first operand, for commands that take none.
    func expectNoOperands() throws(UsageError) {
        if let first = positionals.first { throw usageError("unexpected argument '\(first)'") }
    }

    /// - Throws: `UsageError` when both flags were given.
    func rejectCombined(_ one: Option, _ other: Option) throws(UsageError) {
        if has(one), has(other) { throw usageError("\(one.name) and \(other.name) cannot be combined") }
    }

    fileprivate mutating func add(_ option: Option, value: String?) {
        if let value { values[option.name, default: []].append(value) } else { flags.insert(option.name) }
    }

    fileprivate mutating func add(operand: String) { positionals.append(operand) }

    /// The same options without the operands (`clone` hands its options to `init`).
    /// The same arguments with `option`'s values replaced by `values` (none: removed).
    func setting(_ option: Option, to values: [String]) -> ParsedArguments {
        var copy = self
        copy.values[option.name] = values.isEmpty ? nil : values
        return copy
    }

    func withoutOperands() -> ParsedArguments {
        withOperands([])
    }

    /// The same options with other operands (a workspace gives each collection its own).
    func withOperands(_ operands: [String]) -> ParsedArguments {
        var copy = self
        copy.positionals = operands
        return copy
    }
}

/// A usage mistake; printed with a pointer to `--help`, exit code 2.
struct UsageError: Error, Sendable {
    let message: String
    /// The command whose help to point at, if any.
    let command: String?
}

/// A small strict parser: `--name`, `--name VALUE`, `--name=VALUE`, `-x`, `-x VALUE`,
/// bundled short flags are not needed and not accepted, `--` ends options.
enum ArgumentParser {
    /// One argument as the grammar reads it.
    enum Word {
        /// A declared option, with the value that followed it (the next argument,
        /// or `=VALUE`; a flag keeps an `=VALUE` so the parser can refuse it).
        case option(Option, value: String?)
        /// An option no declaration names (`name` without any `=VALUE`).
        case unknown(name: String)
        /// `arguments[index]`, which is not an option.
        case operand(String, index: Int)
        /// `--`: the arguments after it are operands.
        case endOfOptions
    }

    /// Reads `arguments` against `options`. An option that takes a value takes
    /// the next argument whatever it looks like, so `-C books status` finds
    /// `status`, not `books`. `commandOptions` adds the options of the command
    /// once the first operand (the command name, at the top level) is met, so
    /// that a command's option value is never taken for anything else.
    static func words(_ arguments: [String], options: [Option],
                      commandOptions: (String) -> [Option] = { _ in [] }) -> [Word] {
        var known = options
        var words: [Word] = []
        var seenOperand = false
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            guard isOption(argument) else {
                if !seenOperand {
                    seenOperand = true
                    known += commandOptions(argument)
                }
                words.append(.operand(argument, index: i - 1))
                continue
            }
            if argument == "--" {
                words.append(.endOfOptions)
                words += arguments[i...].indices.map { .operand(arguments[$0], index: $0) }
                break
            }
            let (name, inlineValue) = split(argument)
            guard let option = known.first(where: { $0.isSpelled(name) }) else {
                words.append(.unknown(name: name))
                continue
            }
            var value = inlineValue
            if option.value != nil, value == nil, i < arguments.count {
                value = arguments[i]
                i += 1
            }
            words.append(.option(option, value: value))
        }
        return words
    }

    /// `arguments` as flags, values and operands of `options`.
    /// - Parameter exclusive: Pairs of options the command cannot take together.
    /// - Throws: `UsageError` against `command` for the first unknown option
    ///   (with a suggestion), option without its value, or flag given a value;
    ///   then for a value its option's kind refuses (`--max-delete 200`) and
    ///   for two options given together that `exclusive` pairs.
    static func parse(_ arguments: [String], options: [Option], command: String?,
                      exclusive: [(Option, Option)] = []) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments(command: command)
        for word in words(arguments, options: options) {
            switch word {
            case .operand(let operand, _):
                result.add(operand: operand)
            case .endOfOptions:
                continue
            case .unknown(let name):
                let suggestion = name.hasPrefix("--") ? Suggestions.didYouMean(name, among: options.compactMap(\.long)) : ""
                throw result.usageError("unknown option '\(name)'\(suggestion)")
            case .option(let option, let value):
                switch (option.value, value) {
                case (let declared?, nil):
                    throw result.usageError("option '\(option.name)' needs a value (\(declared.name))")
                case (nil, _?):
                    throw result.usageError("option '\(option.name)' takes no value")
                default:
                    result.add(option, value: value)
                }
            }
        }
        for option in options {
            guard let kind = option.value, let text = result.value(option), let problem = kind.problem(with: text) else { continue }
            throw result.usageError("\(option.name) \(problem)")
        }
        for (one, other) in exclusive { try result.rejectCombined(one, other) }
        return result
    }

    /// Whether `argument` is an option (or `--`) rather than an operand; a
    /// lone `-` is an operand (stdin, by convention).
    static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-"
    }

    /// `--name=VALUE` as its name and value; anything else as itself and nil.
    static func split(_ argument: String) -> (name: String, inlineValue: String?) {
        guard argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }
}
