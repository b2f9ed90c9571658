/// An option a command accepts.
struct OptionSpec: Sendable {
    let name: String
    let short: Character?
    /// Name of the value (`DIR`, `N%`) for options that take one; nil for flags.
    let valueName: String?
    let help: String

    init(_ name: String, short: Character? = nil, value: String? = nil, help: String) {
        self.name = name
        self.short = short
        self.valueName = value
        self.help = help
    }
}

/// A command line split into flags, option values and positionals.
struct ParsedArguments: Sendable {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var positionals: [String] = []

    func has(_ flag: String) -> Bool { flags.contains(flag) }
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
    static func parse(_ arguments: [String], options: [OptionSpec], command: String?) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var i = 0
        var onlyPositionals = false
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if onlyPositionals || !isOption(argument) {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            let (name, inlineValue) = split(argument)
            guard let spec = spec(named: name, in: options) else {
                let suggestion = name.hasPrefix("--") ? Suggestions.didYouMean(name, among: options.map(\.name).filter { $0.hasPrefix("--") }) : ""
                throw UsageError(message: "unknown option '\(name)'\(suggestion)", command: command)
            }
            if let valueName = spec.valueName {
                if let inlineValue {
                    result.values[spec.name] = inlineValue
                } else {
                    guard i < arguments.count else {
                        throw UsageError(message: "option '\(spec.name)' needs a value (\(valueName))", command: command)
                    }
                    result.values[spec.name] = arguments[i]
                    i += 1
                }
            } else {
                if inlineValue != nil { throw UsageError(message: "option '\(spec.name)' takes no value", command: command) }
                result.flags.insert(spec.name)
            }
        }
        return result
    }

    /// Whether `argument` is an option (or `--`) rather than a positional; a
    /// lone `-` is a positional (stdin, by convention).
    static func isOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-"
    }

    /// `--name=VALUE` as its name and value; anything else as itself and nil.
    static func split(_ argument: String) -> (name: String, inlineValue: String?) {
        guard argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }

    /// The option `name` (`--color`, `-q`) means in `options`, if any.
    static func spec(named name: String, in options: [OptionSpec]) -> OptionSpec? {
        options.first { option in
            option.name == name || (option.short.map { "-\($0)" } == name)
        }
    }

    /// Walks a command line as `parse` would, without failing on options it
    /// does not know: the index of the first positional (the command, for the
    /// top level) and each option met with its value, in order. `commandOptions`
    /// adds the options of the command once it is found, so that a command's
    /// option value is never taken for anything else. Options that take a value
    /// skip it, so `-C books status` finds `status`, not `books`.
    static func scan(_ arguments: [String], options: [OptionSpec],
                     commandOptions: (String) -> [OptionSpec] = { _ in [] }) -> (firstPositional: Int?, options: [(OptionSpec, String?)]) {
        var known = options
        var first: Int?
        var found: [(OptionSpec, String?)] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--" { break }
            guard isOption(argument) else {
                if first == nil {
                    first = i - 1
                    known += commandOptions(argument)
                }
                continue
            }
            let (name, inlineValue) = split(argument)
            guard let spec = spec(named: name, in: known) else { continue }
            var value = inlineValue
            if spec.valueName != nil, value == nil, i < arguments.count {
                value = arguments[i]
                i += 1
            }
            found.append((spec, value))
        }
        return (first, found)
    }
}
