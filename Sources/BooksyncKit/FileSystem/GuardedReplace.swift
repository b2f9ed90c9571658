#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replacing or removing a record file only if it still holds what the scan
/// read, checked at the moment of replacement (the manual's Safety article).
///
/// Checking the file and then renaming over it leaves a window in which an
/// editor's save is lost: the editor renames its new file into place after
/// the check, and booksync's rename then replaces it. So booksync swaps
/// instead of checking first: it exchanges its new file with whatever is at
/// the path in one `renameat2(RENAME_EXCHANGE)` (`renamex_np(RENAME_SWAP)` on
/// macOS), reads what it swapped out, and if that is not what the scan saw,
/// swaps back. The editor's file is then in place again, and nothing of it was
/// ever deleted. New files go in with a no-replace rename, removals by renaming
/// the file aside first. A file system without these calls falls back to check
/// then rename, with the old, narrow window.
///
/// What this cannot see is an editor that writes into the old file in place
/// (truncate and write, without a rename) after booksync has swapped it out:
/// that write lands in the swapped-out file. Editors that save by rename
/// (most, and git) are fully covered. A booksync killed between the swap and
/// the check leaves the swapped-out file under a `.booksync-swap-` name; the
/// next writing command moves it to `.booksync/recovered/` instead of deleting it.
extension FileSystem {
    /// Puts `bytes` at `path` if its current content (nil: absent) passes
    /// `isExpected`. Returns false, with nothing changed, when it did not.
    package static func replace(_ path: String, with bytes: [UInt8], ifCurrent isExpected: ([UInt8]?) -> Bool) throws(FileSystemError) -> Bool {
        let temporary = try writeTemporary(bytes, beside: path, marker: swapMarker)
        defer { unlink(temporary) }
        guard exists(path) else {
            // Absent at the scan too? Then move in, unless someone created it meanwhile.
            guard isExpected(nil) else { return false }
            switch RenameCall.noReplace(temporary, path) {
            case .done: return true
            case .failed(EEXIST): return false
            case .failed(let code): throw FileSystemError(path: path, operation: "write", code: code)
            case .unsupported:
                guard !exists(path) else { return false }
                return try renameOrThrow(temporary, path)
            }
        }
        switch RenameCall.exchange(temporary, path) {
        case .done:
            break
        case .failed(ENOENT):
            return false  // removed since the lstat above
        case .failed(let code):
            throw FileSystemError(path: path, operation: "write", code: code)
        case .unsupported:
            guard isExpected(try? readFile(path)) else { return false }
            return try renameOrThrow(temporary, path)
        }
        // `temporary` now holds what was at `path`.
        if isExpected(try? readFile(temporary)) { return true }
        swapBack(temporary, path, ours: bytes)
        return false
    }

    /// Removes `path` if its current content passes `isExpected`. Returns false,
    /// with the file left in place, when it did not (or was already gone).
    package static func remove(_ path: String, ifCurrent isExpected: ([UInt8]?) -> Bool) throws(FileSystemError) -> Bool {
        let aside = temporaryPath(beside: path, marker: swapMarker)
        if rename(path, aside) != 0 {
            let code = errno
            if code == ENOENT { return isExpected(nil) }
            throw FileSystemError(path: path, operation: "remove", code: code)
        }
        if isExpected(try? readFile(aside)) {
            unlink(aside)
            return true
        }
        // Not what the scan saw: put it back. A file saved at the path since is newer still and stays.
        switch RenameCall.noReplace(aside, path) {
        case .done:
            break
        case .failed(EEXIST):
            unlink(aside)  // the editor saved again since: that newer file stays
        case .failed, .unsupported:
            if !exists(path) { rename(aside, path) } else { unlink(aside) }
        }
        return false
    }

    /// Undoes an exchange whose swapped-out file was not the expected one. If the
    /// editor saved yet again in between, its newest file is the one left in place.
    private static func swapBack(_ temporary: String, _ path: String, ours: [UInt8]) {
        for _ in 0..<4 {
            guard case .done = RenameCall.exchange(temporary, path) else { return }
            // `temporary` holds what was at `path`: ours, unless a newer save replaced ours.
            guard let displaced = try? readFile(temporary), displaced != ours else { return }
        }
    }

    private static func renameOrThrow(_ from: String, _ to: String) throws(FileSystemError) -> Bool {
        guard rename(from, to) == 0 else { throw FileSystemError(path: to, operation: "write", code: errno) }
        return true
    }
}

/// The two atomic renames the guarded replace needs, where the platform has them.
enum RenameCall {
    enum Result: Equatable {
        case done
        case failed(Int32)
        /// The system or file system lacks the call: use the plain fallback.
        case unsupported
    }

    /// Swaps the two paths' directory entries atomically.
    static func exchange(_ a: String, _ b: String) -> Result { rename(a, b, .exchange) }

    /// Renames `from` to `to` unless `to` exists.
    static func noReplace(_ from: String, _ to: String) -> Result { rename(from, to, .noReplace) }

    private enum Mode { case exchange, noReplace }

    private static func rename(_ from: String, _ to: String, _ mode: Mode) -> Result {
        #if canImport(Glibc)
        call(from, to, flags: mode == .exchange ? 2 : 1)  // RENAME_EXCHANGE, RENAME_NOREPLACE
        #elseif canImport(Darwin)
        result(renamex_np(from, to, UInt32(mode == .exchange ? RENAME_SWAP : RENAME_EXCL)))
        #else
        .unsupported
        #endif
    }

    private static func result(_ status: Int32) -> Result {
        if status == 0 { return .done }
        let code = errno
        return code == ENOSYS || code == EINVAL || code == ENOTSUP ? .unsupported : .failed(code)
    }

    #if canImport(Glibc)
    private static func call(_ a: String, _ b: String, flags: UInt32) -> Result {
        guard let renameat2 = LibcShims.renameat2 else { return .unsupported }
        return result(renameat2(AT_FDCWD, a, AT_FDCWD, b, flags))
    }
    #endif
}
