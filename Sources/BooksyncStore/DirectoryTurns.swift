@_spi(Remote) import BooksyncKit

/// Writes and syncs of every `RecordStore` in this process take turns per
/// collection directory, in call order.
///
/// The collection lock is a lock between processes: two stores on one
/// directory in one process (two view models, each with its own store) would
/// otherwise meet it held by their own process and fail with "locked". And
/// actor methods interleave at every `await` (a pull awaits the network), so
/// one store's `save` during its own `pull` needs the same turn-taking.
actor DirectoryTurns {
    static let shared = DirectoryTurns()

    private var busy: Set<String> = []
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// The key of a directory: its path with links resolved, so two spellings
    /// of one directory share turns.
    nonisolated static func key(_ directory: String) -> String {
        FileSystem.realPath(directory) ?? FileSystem.absolute(directory)
    }

    /// Returns once `key`'s turn is this caller's.
    func acquire(_ key: String) async {
        guard busy.contains(key) else {
            busy.insert(key)
            return
        }
        await withCheckedContinuation { waiting[key, default: []].append($0) }
        // Handed over by `release`: `key` stayed busy for this caller.
    }

    /// Hands `key`'s turn to the next waiter, or frees it.
    func release(_ key: String) {
        guard var queue = waiting[key], !queue.isEmpty else {
            busy.remove(key)
            return
        }
        let next = queue.removeFirst()
        waiting[key] = queue.isEmpty ? nil : queue
        next.resume()
    }
}
