import BooksyncCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let status = await BooksyncCommand.main(arguments)
exit(status)
