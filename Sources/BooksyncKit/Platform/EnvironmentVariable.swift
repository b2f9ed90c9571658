/// Every environment variable booksync reads, named once. Values are looked up
/// in the environment a command was given (never `getenv` deep inside), so
/// tests and apps pass their own.
package enum EnvironmentVariable {
    /// `host:port` of the Firestore emulator; when set, the emulator is the
    /// target, with a sync state of its own (the manual's RemotesAndTargets article).
    package static let emulatorHost = "FIRESTORE_EMULATOR_HOST"
    /// A ready access token, used as is (the manual's Firestore article).
    package static let accessToken = "BOOKSYNC_ACCESS_TOKEN"
    /// A command whose output is an access token.
    package static let tokenCommand = "BOOKSYNC_TOKEN_COMMAND"
    /// Production Firestore's base URL, for a proxy (tests: a second emulator).
    package static let firestoreURL = "BOOKSYNC_FIRESTORE_URL"
    /// Seconds one request may take.
    package static let requestTimeout = "BOOKSYNC_REQUEST_TIMEOUT"
    /// Seconds all retries of one command may take.
    package static let retryDeadline = "BOOKSYNC_RETRY_DEADLINE"
    /// A service account's or user's key file, as Google's tools read it.
    package static let applicationCredentials = "GOOGLE_APPLICATION_CREDENTIALS"
    /// The project billed for requests (`x-goog-user-project`).
    package static let quotaProject = "GOOGLE_CLOUD_QUOTA_PROJECT"
    /// Where `init` finds the project when `--firestore` is not given, in order.
    package static let projects = ["GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"]
    /// gcloud's configuration folder (its application default credentials).
    package static let gcloudConfig = "CLOUDSDK_CONFIG"
    /// The user's home folder.
    package static let home = "HOME"
    /// The user's configuration folder (`booksync/config.json` in it).
    package static let configHome = "XDG_CONFIG_HOME"
    /// Set and not empty: no colour (no-color.org).
    package static let noColor = "NO_COLOR"
    /// The default of `--progress` (auto, bar, plain or none): a CI job can
    /// set it once for every command.
    package static let progress = "BOOKSYNC_PROGRESS"
    /// The terminal's width, when the shell exports it (the progress bar's
    /// width where the terminal cannot be asked).
    package static let columns = "COLUMNS"
    /// The terminal type; `dumb` means no colour and no redrawn progress bar.
    package static let terminal = "TERM"
}
