import BooksyncCore
@_spi(Remote) import BooksyncKit

/// `--editor vscode` of `schema` and `init`: the editor's settings, and what was done to them.
enum EditorSettings {
    /// Maps the record files in VS Code's settings and says how it went.
    static func mapInVSCode(_ collection: CollectionDirectory, context: CommandContext) throws(BooksyncError) -> ExitCode {
        switch try VSCodeSettings.map(collection) {
        case .written(let path, let created):
            if !context.quiet { context.console.out("\(created ? "created" : "updated") \(context.display(path)): VS Code now checks the record files against the schema") }
        case .unchanged(let path):
            if !context.quiet { context.console.out("\(context.display(path)) already maps the record files") }
        case .needsHand(let path, let reason, let snippet):
            context.console.err("\(context.display(path)) is not plain JSON (\(reason)), so booksync leaves it as it is; add these settings to it:")
            context.console.out(TerminalText(json: String(snippet.dropLast())))
            return .attention
        }
        return .success
    }
}
