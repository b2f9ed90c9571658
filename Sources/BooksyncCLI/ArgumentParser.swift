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
            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inlineValue = String(argument[argument.index(after: eq)...])
            }
            let spec = options.first { option in
                option.name == name || (option.short.map { "-\($0)" } == name)
            }
            guard let spec else {
                throw UsageError(message: "unknown option '\(name)'", command: command)
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
}
