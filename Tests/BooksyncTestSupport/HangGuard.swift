import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that would hang, not fail, if booksync broke
    /// a promise: a FIFO opened without `O_NONBLOCK`, a child process that
    /// never exits, a server that never answers.
    ///
    /// Long on purpose. Swift Testing starts a test's clock when it starts the
    /// test, and it starts hundreds at once on a pool as wide as the cores (two
    /// here), so on a loaded machine a test can wait minutes before its first
    /// line runs: with one minute, 37 tests of a run beside a build failed that
    /// way, none of them hung. Ten minutes still ends a real hang by itself,
    /// well inside CI's 90.
    package static var hangGuard: Self { .timeLimit(.minutes(10)) }
}
