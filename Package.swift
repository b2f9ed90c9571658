// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "booksync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "booksync", targets: ["booksync"]),
        .executable(name: "booksync-network", targets: ["booksync-network"]),
        // The one library product: `import BooksyncStore` re-exports the public parts of
        // Core, Kit, Codable and URLSession; everything else in them is `package`.
        .library(name: "BooksyncStore", targets: ["BooksyncStore"]),
    ],
    targets: [
        .target(name: "BooksyncCore"),
        .target(name: "BooksyncKit", dependencies: ["BooksyncCore"]),
        // Codable DTOs ↔ record fields (RecordEncoder/RecordDecoder). It imports Foundation
        // for Date and Data, so it is a module of its own that the booksync binary never links.
        .target(name: "BooksyncCodable", dependencies: ["BooksyncCore"]),
        // URLSession, in a module of its own: only booksync-network links it.
        .target(name: "BooksyncURLSession", dependencies: ["BooksyncKit"]),
        .target(name: "BooksyncCLI", dependencies: ["BooksyncKit", "BooksyncCore"]),
        // booksync starts without Foundation; remote commands re-run in booksync-network.
        // The Swift runtime is linked in statically on Linux: fewer shared libraries
        // to load make every start faster (the Benchmarks article has the numbers).
        .executableTarget(name: "booksync", dependencies: ["BooksyncCLI"],
                          linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]),
        .executableTarget(name: "booksync-network", dependencies: ["BooksyncCLI", "BooksyncKit", "BooksyncURLSession"]),
        // A typed store for apps: Codable DTOs over a collection directory, synced with Firestore.
        .target(name: "BooksyncStore", dependencies: ["BooksyncCodable", "BooksyncKit", "BooksyncCore", "BooksyncURLSession"]),
        // The usual Firebase BookRepository rewritten on BooksyncStore; scripts/demo runs it.
        .executableTarget(name: "bookshelf-example", dependencies: ["BooksyncStore"]),
        // Scratch directories, fixture lookup and an in-memory remote shared by the test targets.
        .target(name: "BooksyncTestSupport", dependencies: ["BooksyncKit", "BooksyncCore"], path: "Tests/BooksyncTestSupport"),
        .testTarget(name: "BooksyncCoreTests", dependencies: ["BooksyncCore", "BooksyncTestSupport"]),
        .testTarget(name: "BooksyncCodableTests", dependencies: ["BooksyncCodable", "BooksyncCore", "BooksyncTestSupport"]),
        .testTarget(name: "BooksyncKitTests", dependencies: ["BooksyncKit", "BooksyncCore", "BooksyncTestSupport"]),
        .testTarget(name: "BooksyncStoreTests", dependencies: ["BooksyncStore", "BooksyncCodable", "BooksyncKit", "BooksyncCore", "BooksyncTestSupport"]),
        .testTarget(name: "BooksyncCLITests", dependencies: ["BooksyncCLI", "BooksyncKit", "BooksyncCore", "BooksyncURLSession", "BooksyncTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
