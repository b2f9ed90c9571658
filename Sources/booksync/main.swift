import BooksyncCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Local commands run here; remote ones continue in booksync-network (see NetworkAccess).
let status = await BooksyncCommand.main(Array(CommandLine.arguments.dropFirst()), network: .networkHelper)
exit(status)
