/// `booksync help auth`: where booksync finds Firestore credentials (the manual's Firestore article) and what to run for each case, so a new user with a real project does
/// not have to read the source to get past "no Firestore credentials".
enum AuthHelp {
    static let topic = "auth"

    static let text = """
        booksync finds Firestore credentials in this order; the first one present wins
        (the same order as Google's client libraries, Application Default Credentials):

          1. BOOKSYNC_ACCESS_TOKEN        a ready access token (it is not refreshed)
          2. a token command              BOOKSYNC_TOKEN_COMMAND, or "tokenCommand" in
                                          $XDG_CONFIG_HOME/booksync/config.json
                                          (e.g. "gcloud auth print-access-token");
                                          never from a collection's own config.json
          3. GOOGLE_APPLICATION_CREDENTIALS  a JSON credentials file: a service-account
                                          key, an authorized_user file, a workload
                                          identity federation file (external_account),
                                          or an impersonated_service_account file
          4. gcloud's ADC file            $CLOUDSDK_CONFIG/application_default_credentials.json
                                          (default ~/.config/gcloud/...)
          5. the metadata server          on Google Cloud (GCE_METADATA_HOST, default
                                          metadata.google.internal)

        What to run:
          On your own computer:   gcloud auth application-default login
          With a key file:        export GOOGLE_APPLICATION_CREDENTIALS=/path/to/key.json
                                  (IAM & Admin → Service Accounts → Keys → Add key → JSON;
                                  the account needs the Cloud Datastore User role)
          In CI:                  GOOGLE_APPLICATION_CREDENTIALS=the workload identity
                                  federation file ('gcloud iam workload-identity-pools
                                  create-cred-config'; file or url sources, not
                                  executables or AWS), or BOOKSYNC_ACCESS_TOKEN from
                                  the CI's own login step, or a key file as above
          As another account:     gcloud auth application-default login
                                    --impersonate-service-account=SA_EMAIL
          On Google Cloud:        nothing: the metadata server gives the attached
                                  service account's tokens
          The emulator:           FIRESTORE_EMULATOR_HOST=127.0.0.1:8080

        Tokens are kept in memory only, refreshed a minute before they expire and
        once when Firestore answers 401, and never printed. 'booksync -v' names the
        source used, the file's type and the service account.
        GOOGLE_CLOUD_QUOTA_PROJECT, else the file's quota_project_id, is sent as
        x-goog-user-project. Token, STS, IAM and subject-token URLs must be HTTPS
        (plain HTTP only to a loopback address), and redirects are never followed.
        """
}
