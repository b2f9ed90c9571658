// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "booksync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "booksync", targets: ["booksync"]),
        .library(name: "BooksyncKit", targets: ["BooksyncKit"]),
        .library(name: "BooksyncCore", targets: ["BooksyncCore"]),
    ],
    targets: [
        .target(name: "BooksyncCore"),
        .target(name: "BooksyncKit", dependencies: ["BooksyncCore"]),
        .target(name: "BooksyncCLI", dependencies: ["BooksyncKit", "BooksyncCore"]),
        .executableTarget(name: "booksync", dependencies: ["BooksyncCLI"]),
        // Scratch directories and fixture lookup shared by the test targets.
        .target(name: "BooksyncTestSupport", path: "Tests/BooksyncTestSupport"),
        .testTarget(name: "BooksyncCoreTests", dependencies: ["BooksyncCore"]),
        .testTarget(name: "BooksyncKitTests", dependencies: ["BooksyncKit", "BooksyncCore", "BooksyncTestSupport"]),
        .testTarget(name: "BooksyncCLITests", dependencies: ["BooksyncCLI", "BooksyncKit", "BooksyncCore", "BooksyncTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
