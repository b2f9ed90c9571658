import BooksyncCLI
@_spi(Remote) import BooksyncKit
import BooksyncURLSession
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// booksync with URLSession linked in: booksync hands remote commands to it.
MallocArenas.useOne()  // flat memory for large pulls and pushes (see MallocArenas)
MallocArenas.mapBlocks()
let network = NetworkAccess.linked(make: { URLSessionTransport.make(requestTimeout: $0) })
let signals = BooksyncCommand.takeSignals(network: network)  // before the first await: see takeSignals
let status = await BooksyncCommand.main(Array(CommandLine.arguments.dropFirst()), network: network, signals: signals)
exit(status)
