import BooksyncCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Local commands run here; remote ones continue in booksync-network (see NetworkAccess).
let network = NetworkAccess.networkHelper
let signals = BooksyncCommand.takeSignals(network: network)  // before the first await: see takeSignals
let status = await BooksyncCommand.main(Array(CommandLine.arguments.dropFirst()), network: network, signals: signals)
exit(status)
