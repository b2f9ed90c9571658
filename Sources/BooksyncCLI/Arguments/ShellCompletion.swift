/// The completion scripts for bash, zsh and fish, written from a `CompletionModel`.
///
/// Every name in them (commands, options, choices) comes from booksync's own
/// tables, which hold only `[a-z0-9-]` words; descriptions are quoted for the
/// shell that reads them. The bash script keeps to bash 3.2 (macOS's
/// /bin/bash): no associative arrays, `mapfile` or unguarded `compopt`.
enum ShellCompletion {
    /// The comment that opens every script: what printed it, then how to load
    /// it (`howToLoad`, one comment line each, the first one after the text).
    private static func header(_ shell: String, _ howToLoad: String...) -> [String] {
        ["# \(shell) completion for booksync, printed by 'booksync completion \(shell)' from its own",
         "# tables of commands and options. " + howToLoad[0]]
            + howToLoad.dropFirst().map { "# " + $0 }
    }

    static func bash(_ model: CompletionModel) -> String {
        let globalValues = model.valueSpellings(model.globals)
        var lines = header("bash", "Load it from ~/.bashrc with", "  source <(booksync completion bash)",
                           "or install it as bash-completion/completions/booksync.") + [
            "_booksync_reply() {",
            "    COMPREPLY=()",
            "    local line",
            "    while IFS= read -r line; do COMPREPLY+=(\"$line\"); done",
            "}",
            "_booksync() {",
            "    local cur prev command i word options",
            "    cur=${COMP_WORDS[COMP_CWORD]}",
            "    prev=",
            "    if [ \"$COMP_CWORD\" -gt 0 ]; then prev=${COMP_WORDS[COMP_CWORD-1]}; fi",
            "    # '--color=al' arrives as '--color' '=' 'al': '=' breaks words.",
            "    if [ \"$cur\" = \"=\" ]; then cur=; fi",
            "    if [ \"$prev\" = \"=\" ] && [ \"$COMP_CWORD\" -gt 1 ]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi",
            "    command=",
            "    i=1",
            "    while [ \"$i\" -lt \"$COMP_CWORD\" ]; do",
            "        word=${COMP_WORDS[i]}",
            "        case $word in",
            "            \(globalValues.joined(separator: "|")))",
            "                i=$((i + 1))",
            "                if [ \"${COMP_WORDS[i]}\" = \"=\" ]; then i=$((i + 1)); fi ;;",
            "            --) break ;;",
            "            -*) ;;",
            "            *) command=$word; break ;;",
            "        esac",
            "        i=$((i + 1))",
            "    done",
            "    case $prev in",
        ]
        var valueCases: [String] = []
        for option in model.globals where option.value != nil {
            valueCases.append(bashValueCase(option, indent: "        "))
        }
        lines += valueCases
        lines += ["    esac", "    case $command in"]
        for command in model.commands where command.options.contains(where: { $0.value != nil }) {
            lines.append("        \(command.name))")
            lines.append("            case $prev in")
            for option in command.options where option.value != nil {
                lines.append(bashValueCase(option, indent: "                "))
            }
            lines.append("            esac ;;")
        }
        lines += [
            "    esac",
            "    case $command in",
        ]
        let globalWords = model.globals.flatMap(\.spellings)
        for command in model.commands {
            let words = command.options.flatMap(\.spellings) + globalWords
            lines.append("        \(command.name)) options=\"\(words.joined(separator: " "))\" ;;")
        }
        lines += [
            "        *) options=\"\(globalWords.joined(separator: " "))\" ;;",
            "    esac",
            "    case $cur in",
            "        -*) _booksync_reply < <(compgen -W \"$options\" -- \"$cur\"); return ;;",
            "    esac",
            "    if [ -z \"$command\" ]; then",
            "        _booksync_reply < <(compgen -W \"\(model.commands.map(\.name).joined(separator: " "))\" -- \"$cur\")",
            "        return",
            "    fi",
            "    case $command in",
        ]
        for command in model.commands {
            switch command.operands {
            case .none:
                continue
            case .files:
                lines.append("        \(command.name))")
                lines.append("            type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null")
                lines.append("            _booksync_reply < <(compgen -f -- \"$cur\") ;;")
            case .choices(let words):
                lines.append("        \(command.name)) _booksync_reply < <(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\") ;;")
            }
        }
        lines += [
            "        *) COMPREPLY=() ;;",
            "    esac",
            "}",
            "complete -F _booksync booksync",
        ]
        return lines.joined(separator: "\n")
    }

    /// `--color) _booksync_reply < <(compgen -W "auto always never" -- "$cur"); return ;;`
    private static func bashValueCase(_ option: Option, indent: String) -> String {
        let pattern = option.spellings.joined(separator: "|")
        switch option.value {
        case .directory:
            return indent + "\(pattern)) type compopt >/dev/null 2>&1 && compopt -o filenames 2>/dev/null; _booksync_reply < <(compgen -d -- \"$cur\"); return ;;"
        case .choice(_, let words):
            return indent + "\(pattern)) _booksync_reply < <(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\"); return ;;"
        case .text, .percentage, nil:
            return indent + "\(pattern)) COMPREPLY=(); return ;;"
        }
    }

    static func zsh(_ model: CompletionModel) -> String {
        var lines = ["#compdef booksync"]
            + header("zsh", "Install it as _booksync in a directory of $fpath,",
                     "or load it from ~/.zshrc (after compinit) with: source <(booksync completion zsh)") + [
            "_booksync() {",
            "    local curcontext=\"$curcontext\" state line ret=1",
            "    typeset -A opt_args",
            "    _arguments -C \\",
        ]
        lines += model.globals.flatMap(zshSpecs).map { "        \($0) \\" }
        lines += [
            "        '1:command:->command' \\",
            "        '*::argument:->argument' && ret=0",
            "    case $state in",
            "        command)",
            "            local -a commands",
            "            commands=(",
        ]
        lines += model.commands.map { "                \(zshQuote($0.name + ":" + $0.summary))" }
        lines += [
            "            )",
            "            _describe -t commands 'booksync command' commands && ret=0",
            "            ;;",
            "        argument)",
            "            curcontext=\"${curcontext%:*:*}:booksync-$words[1]:\"",
            "            case $words[1] in",
        ]
        for command in model.commands {
            lines.append("                \(command.name))")
            lines.append("                    _arguments \\")
            lines += (command.options + model.globals).flatMap(zshSpecs).map { "                        \($0) \\" }
            switch command.operands {
            case .none:
                lines.append("                        && ret=0")
            case .files:
                lines.append("                        '*:file:_files' && ret=0")
            case .choices(let words):
                lines.append("                        '1:\(command.name):(\(words.joined(separator: " ")))' && ret=0")
            }
            lines.append("                    ;;")
        }
        lines += [
            "            esac",
            "            ;;",
            "    esac",
            "    return ret",
            "}",
            "if [ \"$funcstack[1]\" = \"_booksync\" ]; then",
            "    _booksync \"$@\"",
            "else",
            "    compdef _booksync booksync",
            "fi",
        ]
        return lines.joined(separator: "\n")
    }

    /// One `_arguments` spec per spelling: `'--color=[help]:WHEN:(auto always never)'`.
    private static func zshSpecs(_ option: Option) -> [String] {
        let help = "[" + zshBracketed(option.help) + "]"
        let argument: String
        switch option.value {
        case nil: argument = ""
        case .directory: argument = ":directory:_files -/"
        case .choice(_, let words): argument = ":value:(\(words.joined(separator: " ")))"
        case .text(let name), .percentage(let name): argument = ":" + zshMessage(name) + ": "
        }
        return option.spellings.map { spelling in
            // `--name=` takes the value after `=` or as the next word, as the parser does.
            let accepts = option.value != nil && spelling.hasPrefix("--") ? "=" : ""
            return zshQuote(spelling + accepts + help + argument)
        }
    }

    /// Text inside an `_arguments` description: brackets escaped.
    private static func zshBracketed(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("[", with: "\\[").replacing("]", with: "\\]")
    }

    /// A message of `_arguments`: colons would end it.
    private static func zshMessage(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing(":", with: "\\:")
    }

    /// A single-quoted zsh word.
    private static func zshQuote(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    static func fish(_ model: CompletionModel) -> String {
        let globalValues = model.valueSpellings(model.globals)
        var lines = header("fish", "Install it as fish/vendor_completions.d/booksync.fish,",
                           "or load it with: booksync completion fish | source") + [
            "function __booksync_command",
            "    set -l tokens (commandline -opc)",
            "    set -e tokens[1]",
            "    set -l skip 0",
            "    for token in $tokens",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch $token",
            "            case \(globalValues.joined(separator: " "))",
            "                set skip 1",
            "            case '-*'",
            "            case '*'",
            "                echo $token",
            "                return 0",
            "        end",
            "    end",
            "    return 1",
            "end",
            "function __booksync_using",
            "    set -l command (__booksync_command)",
            "    and test \"$command\" = $argv[1]",
            "end",
            "complete -c booksync -f",
        ]
        for command in model.commands {
            lines.append("complete -c booksync -n 'not __booksync_command >/dev/null' -a \(command.name) -d \(fishQuote(command.summary))")
        }
        lines += model.globals.map { fishOption($0, condition: nil) }
        for command in model.commands {
            let condition = "__booksync_using \(command.name)"
            lines += command.options.map { fishOption($0, condition: condition) }
            switch command.operands {
            case .none:
                break
            case .files:
                lines.append("complete -c booksync -n \(fishQuote(condition)) -F")
            case .choices(let words):
                lines.append("complete -c booksync -n \(fishQuote(condition)) -a \(fishQuote(words.joined(separator: " ")))")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func fishOption(_ option: Option, condition: String?) -> String {
        var parts = ["complete -c booksync"]
        if let condition { parts.append("-n " + fishQuote(condition)) }
        if let short = option.letter { parts.append("-s \(short)") }
        if let long = option.long { parts.append("-l " + long.dropFirst(2)) }
        switch option.value {
        case nil: break
        case .directory: parts.append("-x -a '(__fish_complete_directories)'")
        case .choice(_, let words): parts.append("-x -a " + fishQuote(words.joined(separator: " ")))
        case .text, .percentage: parts.append("-x")
        }
        parts.append("-d " + fishQuote(option.help))
        return parts.joined(separator: " ")
    }

    /// A single-quoted fish word: only `\` and `'` are special inside.
    private static func fishQuote(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }
}
