/// How often and how long remote requests are retried.
///
/// Exponential backoff with "equal jitter" (half the ceiling plus a random
/// share of the other half), bounded in attempts and in total time, and every
/// request has its own timeout, so a command always ends.
public struct RetryPolicy: Sendable {
    /// Attempts per request, the first included; the last failure ends them.
    public var maximumAttempts: Int
    /// Delay before the second attempt; doubles each time up to `maximumDelay`.
    public var initialDelay: Duration
    /// Longest wait between attempts of booksync's own backoff. A server's
    /// Retry-After is honoured whole, within `totalDeadline` (a wait past it
    /// ends the retries at once, saying what the server asked).
    public var maximumDelay: Duration
    /// How long a single request may take.
    public var requestTimeout: Duration
    /// How long all attempts of one request may take together.
    public var totalDeadline: Duration
    /// Waits between attempts; tests replace it so they need not sleep.
    public var sleep: @Sendable (Duration) async -> Void
    /// A number in 0..<1 for jitter; tests make it deterministic.
    public var random: @Sendable () -> Double

    /// The CLI's policy by default (6 attempts, waits from 0.2 s up to 5 s,
    /// 30 s per request, 120 s in all).
    /// - Parameters:
    ///   - maximumAttempts: Attempts of one request, the first included.
    ///   - initialDelay: The wait before the second attempt; it doubles each time.
    ///   - maximumDelay: The longest wait between attempts (a `Retry-After` may ask for more).
    ///   - requestTimeout: How long one attempt may take.
    ///   - totalDeadline: How long all attempts of one request may take together.
    ///   - sleep: Waits the given time; tests pass one that returns at once.
    ///   - random: Returns a number in 0..<1 for jitter; tests pass a constant.
    public init(
        maximumAttempts: Int = 6, initialDelay: Duration = .milliseconds(200), maximumDelay: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(30), totalDeadline: Duration = .seconds(120),
        sleep: @escaping @Sendable (Duration) async -> Void = { wait in try? await Task.sleep(for: min(max(wait, .zero), .seconds(1e12))) },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.requestTimeout = requestTimeout
        self.totalDeadline = totalDeadline
        self.sleep = sleep
        self.random = random
    }

    /// The wait before attempt `attempt + 1` (attempt counts from 1), honouring a
    /// server's Retry-After when it asks for longer; in seconds.
    func delay(afterAttempt attempt: Int, retryAfter: Double?) -> Double {
        let ceiling = min(maximumDelay.seconds, initialDelay.seconds * Double(1 << min(attempt - 1, 20)))
        let jittered = ceiling / 2 + random() * ceiling / 2
        if let retryAfter, retryAfter.isFinite { return max(jittered, retryAfter) }
        return jittered
    }

    /// Seconds as a person writes them: `30`, `0.5`.
    package static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    /// A time as a person writes it, in seconds: `30`, `0.5`.
    package static func format(_ duration: Duration) -> String { format(duration.seconds) }

    /// HTTP statuses worth another attempt: rate limits and transient server
    /// errors; `code` is the answer's status name (a `GRPCCode` name).
    static func isRetryable(status: Int, code: String) -> Bool {
        switch status {
        case 429, 500, 502, 503, 504: true
        case 409: GRPCCode(name: code) == .aborted
        default: false
        }
    }
}
