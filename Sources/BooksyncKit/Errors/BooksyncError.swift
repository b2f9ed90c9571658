import BooksyncCore

/// Every failure of a booksync operation, each a sentence a user can act on.
public enum BooksyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `.booksync/` in the directory or any parent.
    case notACollection(String)
    /// `init` in a directory that already has `.booksync/`.
    case alreadyInitialized(String)
    /// A bad argument the caller can fix (a collection path, a file outside the collection).
    case invalidArgument(String)
    /// A state file of booksync's own (config, manifest) is damaged.
    case damagedStateFile(path: String, StateFileError)
    /// A state file of booksync's own still has git's conflict markers.
    case unfinishedGitMerge(path: String)
    /// Reading or writing a file failed.
    case io(FileSystemError)
    /// Another process holds the lock; `pid` is nil when the lock file names
    /// none (its holder took it a moment ago, is releasing it, or is not a
    /// booksync that writes its PID there).
    case lockHeld(path: String, pid: Int32?)
    /// The remote failed after retries.
    case remote(RemoteError)
    /// Ctrl-C: the command stopped early; what it finished is recorded.
    case interrupted
    /// A pull, push or `seed --delete` would delete too many records
    /// (`--max-delete`): `deletes` of `baseCount` (for seed, the target's
    /// documents). In a watch, `alreadyDeleted` of them are the deletions it
    /// made since it started, counted in both numbers; `rerun` is the command
    /// line that runs it past the guard (nil: `booksync COMMAND --force`).
    case massDelete(command: String, deletes: Int, baseCount: Int, maximumPercent: Double, alreadyDeleted: Int = 0, rerun: String? = nil)
    /// The base in use was recorded against another target than the one the
    /// command would reach (`remote`: the name of the remote whose state it is;
    /// `recorded` nil: an older booksync recorded no target, and the command
    /// would apply that base to an emulator).
    case targetMismatch(remote: String, manifest: String, recorded: TargetIdentity?, using: TargetIdentity)
    /// A pull would delete every record because the target is empty while the base is not.
    case emptiedTarget(remote: String, target: String, baseCount: Int, deletes: Int)
    /// `push --atomic` has more writes than one Firestore commit takes (a dry run says so too).
    case atomicTooLarge(writes: Int, limit: Int)
    /// `push --atomic` of writes whose one request would exceed the remote's size limit (bytes).
    case atomicTooManyBytes(bytes: Int, limit: Int)
    /// git is changing the work tree (a checkout, a merge, a rebase…), or
    /// changed the base while the command read the files: syncing now would
    /// take git's writes for edits. `activity` says what, as a phrase.
    case gitBusy(activity: String)
    /// A plan file that cannot be applied here: `plan` names the file and
    /// `problem` ends the sentence (another target, another format version,
    /// edited by hand).
    case planRefused(plan: String, problem: String)
    /// The files, the base or the remote moved since the plan was made:
    /// each of `drifted` says which record and what moved. Nothing was written.
    case planDrift(plan: String, drifted: [String])

    public var description: String {
        switch self {
        case .notACollection(let dir):
            "not a booksync collection (or any parent up to /): \(dir); run 'booksync init --collection PATH' first"
        case .alreadyInitialized(let dir):
            "\(dir) is already a booksync collection (it has .booksync/); edit .booksync/config.json to change it"
        case .invalidArgument(let message):
            message
        case .damagedStateFile(let path, let error):
            if let position = error.position {
                "\(path):\(position): \(error.message)"
            } else {
                "\(path): \(error.message)"
            }
        case .unfinishedGitMerge(let path):
            Self.unfinishedMergeAdvice(path)
        case .io(let error):
            error.description
        case .lockHeld(let path, let pid?):
            // Never "remove the lock": a held flock means a live holder (the kernel drops it
            // when the process ends), and removing the file would let two commands in at once.
            "another booksync (pid \(pid)) is working in this collection (it holds \(path)); wait for it to finish, then run the command again"
        case .lockHeld(let path, nil):
            "another booksync is working in this collection (it holds \(path), which does not say its pid); wait for it to finish, then run the command again"
        case .remote(let error):
            error.description
        case .interrupted:
            "interrupted; what was finished is recorded, run the command again to complete it"
        case .massDelete(let command, let deletes, let baseCount, let percent, let alreadyDeleted, let rerun):
            Self.massDeleteAdvice(command: command, deletes: deletes, baseCount: baseCount, percent: percent,
                                  alreadyDeleted: alreadyDeleted, rerun: rerun ?? "booksync \(command) --force")
        case .targetMismatch(let remote, let manifest, let recorded, let using):
            "the base of remote '\(remote)' (\(manifest)) was recorded against "
                + (recorded.map(\.description) ?? "a target an older booksync did not record")
                + ", but this command would use \(using); nothing was read or written. "
                + Self.targetAdvice(recorded: recorded, using: using)
                + "give this target a remote of its own ('booksync remote add NAME …', then --remote NAME), "
                + "or run 'booksync remote forget \(remote)' to drop that base (the files stay; the next pull compares them by content)"
        case .atomicTooLarge(let writes, let limit):
            "push --atomic would send \(writes) writes in one commit, and Firestore takes at most \(limit); nothing was sent. "
                + "Push without --atomic (every write is still guarded), or fewer records at once with pathspecs"
        case .atomicTooManyBytes(let bytes, let limit):
            "push --atomic would send \(bytes / 1024) KiB in one commit, and one request to this target may carry at most \(limit / 1024) KiB; "
                + "nothing was sent. "
                + "Push without --atomic (every write is still guarded), or fewer records at once with pathspecs"
        case .gitBusy(let activity):
            "\(activity); booksync does not sync while git changes the files (it would take git's writes for your edits, and a file "
                + "git is rewriting for a deletion). Nothing was written. Let git finish (or finish the merge, "
                + "rebase or bisect yourself), then run the command again"
        case .planRefused(let plan, let problem):
            "\(plan) \(problem). Nothing was written"
        case .planDrift(let plan, let drifted):
            "\(plan) no longer matches what it was made from, so nothing was written: " + drifted.joined(separator: "; ")
                + ". Make the plan again (booksync plan --out \(plan)), review it, and apply the new one"
        case .emptiedTarget(let remote, let target, let baseCount, let deletes):
            "\(target) has no documents, but the base of remote '\(remote)' records \(baseCount) synced record\(baseCount == 1 ? "" : "s"); "
                + "pull would delete \(deletes == 1 ? "its file" : "all \(deletes) of their files") here and refuses. Was the emulator "
                + "restarted, the project or database wrong, or the target wiped? Nothing was deleted. To load the target from these files, run "
                + "'booksync seed\(remote == RemoteList.origin ? "" : " --remote " + remote)'; if every document really was deleted, run 'booksync pull --force'"
        }
    }

    /// The mass-delete refusal: the numbers, as what they count, and the
    /// command that goes past the guard exactly as refused (its remote, its
    /// pathspecs, seed's `--delete`). In a watch, the earlier deletions it
    /// adds up are named, so "5 of 9" is not read against a collection of 6.
    private static func massDeleteAdvice(command: String, deletes: Int, baseCount: Int, percent: Double,
                                         alreadyDeleted: Int, rerun: String) -> String {
        let limit = "more than --max-delete \(format(percent))%; check what happened, then "
        if command == "seed" {
            return "seed --delete would delete \(deletes) of the \(baseCount) documents in the target, \(limit)"
                + "run '\(rerun)' (or raise --max-delete) if it is intended"
        }
        guard alreadyDeleted > 0 else {
            return "\(command) would delete \(deletes) of \(baseCount) records, \(limit)run '\(rerun)' (or raise --max-delete) if it is intended"
        }
        let now = deletes - alreadyDeleted
        return "\(command) would delete \(now) more record\(now == 1 ? "" : "s"); with the \(alreadyDeleted) this watch deleted before, "
            + "that is \(deletes) of the \(baseCount) records the base had before it deleted any, \(limit)"
            + "stop the watch and run '\(rerun)' (or start it again with a higher --max-delete) if it is intended"
    }

    /// The first way out of a target mismatch: the setting that reaches the recorded target.
    static func targetAdvice(recorded: TargetIdentity?, using: TargetIdentity) -> String {
        if let host = recorded?.emulatorHost { return "Set FIRESTORE_EMULATOR_HOST=\(host) to use that emulator, " }
        if using.isEmulator { return "Unset FIRESTORE_EMULATOR_HOST to use \(recorded == nil ? "production" : "that target"), " }
        return "Check BOOKSYNC_FIRESTORE_URL and .booksync/config.json, "
    }

    /// What to do about conflict markers in config.json or manifest.json.
    /// `git checkout -m` redoes a file's merge with the merge driver the
    /// attributes name, so once `init --git` has installed booksync's manifest
    /// driver, it resolves the manifest by record.
    private static func unfinishedMergeAdvice(_ path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let start = "\(path) has git conflict markers: a git merge of it is unfinished. "
        if name == "manifest.json" {
            return start + "Install booksync's merge driver for it with 'booksync init --git' (once per clone), "
                + "redo the merge of this file with 'git checkout -m -- \(path)', then 'git add \(path)'; "
                + "or take one side whole with 'git checkout --ours -- \(path)' (or --theirs) and 'git add \(path)'"
        }
        return start + "Edit it to keep the settings you want (remove the <<<<<<<, ======= and >>>>>>> lines), "
            + "then 'git add \(path)'"
    }

    private static func format(_ percent: Double) -> String {
        percent == percent.rounded() ? String(Int(percent)) : String(percent)
    }
}

extension BooksyncError {
    /// `body`, with a file-system failure as `.io`: the one conversion of a
    /// `FileSystemError` into the engine's error, where nothing else is done about it.
    static func io<T>(_ body: () throws(FileSystemError) -> T) throws(BooksyncError) -> T {
        do {
            return try body()
        } catch {
            throw .io(error)
        }
    }
}
