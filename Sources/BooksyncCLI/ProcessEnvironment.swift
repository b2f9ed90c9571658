#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@_spi(Remote) import BooksyncKit

/// The process environment as a dictionary, read once at startup.
enum ProcessEnvironment {
    static func variables() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = Subprocess.currentEnvironment
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                result[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            pointer += 1
        }
        return result
    }
}
