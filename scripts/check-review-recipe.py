#!/usr/bin/env python3
"""The "Reviewing changes" recipe, run as CI would run it, against the emulator.

  check-review-recipe.py --bin PATH/booksync --host HOST:PORT

A git repository holds the collection folder books/ whose origin is
"production" (a non-emulator target reached through BOOKSYNC_FIRESTORE_URL, so
its base is committed as a real production base is) and whose remote staging
is another project. Then, in order, with the booksync commands the article
shows:

  1. a pull request bulk-edits prices (every file, then fmt); CI runs validate,
     schema --check and plan --markdown, and the comment renders safely
     (scripts/check-markdown.py, with GitHub's cmark-gfm);
  2. after the merge CI plans the merged tree, applies it, commits the base;
     production holds the edit and status is clean in a fresh clone;
  3. a reviewed plan applied after production moved is refused (exit 4,
     nothing written); re-planned, the moved record is held;
  4. the scheduled job finds the production edit (status --exit-code is 1),
     pulls it into a branch, and the branch merges;
  5. staging is promoted: compare names the difference, pull --remote staging
     brings it into the files, plan and apply write it to production, and
     compare then finds the two the same.

Production and staging are reached as CI reaches them without a key: through
scripts/token_server.py on 127.0.0.1, a proxy in front of the emulator that
accepts only tokens its IAM stand-in issued, reached with an external_account
credentials file (a subject token from a file, exchanged at the STS stand-in,
then a service account impersonated), as google-github-actions/auth writes one.
No output may hold the subject token or any token issued. Every step is
bounded in time; the script stops by itself.
"""
import argparse
import json
import secrets
import os
import subprocess
import sys
import urllib.request
import uuid

from harness import emulator, process
from harness.booksync import environment
from harness.checks import Checks
from harness.scratch import scratch

STEP_TIMEOUT = 120


class Recipe:
    def __init__(self, arguments, checks):
        self.bin = os.path.abspath(arguments.bin)
        self.host = arguments.host
        self.checks = checks
        self.scratch = scratch("recipe")
        self.root = self.scratch.name
        suffix = uuid.uuid4().hex[:8]
        self.production = "books-prod-" + suffix
        self.staging = "books-staging-" + suffix
        self.environment = environment(
            drop=("FIRESTORE_EMULATOR_HOST", "BOOKSYNC_ACCESS_TOKEN", "BOOKSYNC_TOKEN_COMMAND", "GOOGLE_APPLICATION_CREDENTIALS"),
            GIT_AUTHOR_NAME="ci", GIT_AUTHOR_EMAIL="ci@example.com", GIT_COMMITTER_NAME="ci", GIT_COMMITTER_EMAIL="ci@example.com")
        self.environment["CLOUDSDK_CONFIG"] = os.path.join(self.root, "no-gcloud")
        self.environment["NO_GCE_CHECK"] = "1"
        self.outputs = []
        self.server = None

    def sign_in_without_keys(self):
        """Starts the token server (STS, IAM, proxy) and writes the external_account file CI gets."""
        here = os.path.dirname(os.path.abspath(__file__))
        key = os.path.join(self.root, "unused-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key],
                       check=True, capture_output=True, timeout=60)
        public = os.path.join(self.root, "unused-key.pub")
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", public], check=True, capture_output=True, timeout=60)
        self.subject_token = "oidc-" + secrets.token_hex(24)
        self.account = "catalogue-ci@books-prod.iam.gserviceaccount.com"
        audience = "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/github/providers/repo"
        self.server = subprocess.Popen(
            [sys.executable, os.path.join(here, "token_server.py"), "--upstream", self.host, "--client-email", "unused@x.iam.gserviceaccount.com",
             "--public-key", public, "--audience", audience, "--subject-token", self.subject_token, "--impersonate", self.account,
             "--require-impersonated", "--lifetime", "600", "--max-seconds", "900"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = json.loads(self.server.stdout.readline())["port"]
        token_file = os.path.join(self.root, "oidc-token")
        with open(token_file, "w") as f:
            f.write(self.subject_token)
        credentials = os.path.join(self.root, "gha-creds.json")
        with open(credentials, "w") as f:
            json.dump({
                "type": "external_account", "audience": audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
                "token_url": "http://127.0.0.1:%d/sts" % self.port, "credential_source": {"file": token_file},
                "service_account_impersonation_url":
                    "http://127.0.0.1:%d/v1/projects/-/serviceAccounts/%s:generateAccessToken" % (self.port, self.account),
            }, f)
        self.environment["GOOGLE_APPLICATION_CREDENTIALS"] = credentials
        self.environment["BOOKSYNC_FIRESTORE_URL"] = "http://127.0.0.1:%d/v1/" % self.port

    def server_log(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/__log" % self.port, timeout=30) as response:
            return json.loads(response.read())

    def stop(self):
        if self.server:
            self.server.stdin.close()
            try:
                self.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.server.kill()

    def run(self, *command, cwd=None, expect=0):
        """Runs a command in the repository (or cwd); checks its exit status."""
        result = process.run(command, cwd=cwd or self.repo, env=self.environment, timeout=STEP_TIMEOUT)
        self.outputs.append(result.stdout + result.stderr)
        shown = " ".join(command).replace(self.bin, "booksync")
        self.checks.check(result.returncode == expect, "%s exited %d, expected %d:\n%s%s" % (shown, result.returncode, expect,
                                                                                      result.stdout[-2000:], result.stderr[-2000:]))
        return result

    def booksync(self, *arguments, expect=0):
        return self.run(self.bin, "-C", "books", *arguments, expect=expect)

    def git(self, *arguments):
        return self.run("git", *arguments)

    def documents(self, project):
        found = {}
        for document in emulator.documents(self.host, project):
            fields = document.get("fields", {})
            found[document["name"].rsplit("/", 1)[1]] = {k: list(v.values())[0] for k, v in fields.items()}
        return found

    def rest_set(self, project, record, field, value):
        """An app's one-field update of a document."""
        with emulator.Client(self.host, project, timeout=30) as client:
            client.commit([{"update": {"name": client.name("books/" + record), "fields": {field: value}},
                            "updateMask": {"fieldPaths": [field]}}])

    def write_book(self, record, price, title=None):
        with open(os.path.join(self.repo, "books", record + ".json"), "w") as f:
            json.dump({"id": record, "title": title or record.title(), "author": "A. Author", "genre": "fiction", "price": price}, f)

    def bulk_edit_prices(self):
        """What `jq '.price = (.price * 1.1 | floor)'` over every file does."""
        folder = os.path.join(self.repo, "books")
        for name in sorted(os.listdir(folder)):
            if name.endswith(".json"):
                path = os.path.join(folder, name)
                with open(path) as f:
                    record = json.load(f)
                record["price"] = int(record["price"] * 1.1)
                with open(path, "w") as f:
                    json.dump(record, f)

    # The recipe, step by step.

    def setup(self):
        self.repo = os.path.join(self.root, "catalogue")
        os.makedirs(self.repo)
        self.git("init", "-q", "-b", "main")
        self.run(self.bin, "init", "--firestore", self.production, "--collection", "books", "--require", "title:string",
                 "--optional", "price:integer", "--git", "books")
        for index, record in enumerate(["dune", "emma", "ivanhoe", "kim"]):
            self.write_book(record, 100 + 10 * index)
        self.booksync("fmt")
        self.booksync("schema")
        self.booksync("push")
        self.booksync("remote", "add", "staging", "--firestore", self.staging)
        self.booksync("seed", "--remote", "staging")
        self.git("add", "-A")
        self.git("commit", "-qm", "catalogue")
        self.checks.check(set(self.documents(self.production)) == {"dune", "emma", "ivanhoe", "kim"}, "production was not loaded")

    def pull_request_and_merge(self):
        self.git("switch", "-qc", "price-update")
        self.bulk_edit_prices()
        self.booksync("fmt")
        self.booksync("validate")
        self.booksync("schema", "--check")
        comment = self.booksync("plan", "--markdown").stdout
        self.checks.check("4 writes (4 updates), 4 field changes" in comment, "the plan comment's summary:\n" + comment)
        self.checks.check("| dune | *update* | price | 100 | 110 |" in comment, "the plan comment's row for dune:\n" + comment)
        self.comment = os.path.join(self.root, "plan.md")
        with open(self.comment, "w") as f:
            f.write(comment)
        markdown = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-markdown.py"), self.comment],
                                  capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        self.checks.check(markdown.returncode == 0, "the plan comment does not render safely:\n" + markdown.stdout + markdown.stderr)
        # The reviewed plan, kept as the pull request's build artifact.
        self.booksync("plan", "--out", "../../reviewed-plan.json")
        self.git("commit", "-qam", "prices up 10%")
        self.git("switch", "-q", "main")
        self.git("merge", "-q", "--no-ff", "-m", "Merge price-update", "price-update")
        # CI after the merge: the plan of the merged tree, applied, the base committed.
        self.booksync("plan", "--out", "../../merged-plan.json")
        self.booksync("apply", "../../merged-plan.json")
        self.git("add", "books/.booksync")
        self.git("commit", "-qm", "booksync: applied")
        prices = {k: v.get("price") for k, v in self.documents(self.production).items()}
        self.checks.check(prices == {"dune": "110", "emma": "121", "ivanhoe": "132", "kim": "143"}, "production after apply: %s" % prices)
        fresh = os.path.join(self.root, "fresh")
        self.run("git", "clone", "-q", self.repo, fresh, cwd=self.root)
        self.run(self.bin, "-C", "books", "status", "--exit-code", cwd=fresh)
        # The reviewed plan was applied in substance: applying it says so and writes nothing.
        again = self.booksync("apply", "../../reviewed-plan.json")
        self.checks.check("was already applied" in again.stdout, "the reviewed plan after the merged one:\n" + again.stdout)

    def drift_and_production_edits(self):
        self.git("switch", "-qc", "kim-title")
        with open(os.path.join(self.repo, "books", "kim.json")) as f:
            kim = json.load(f)
        kim["title"] = "Kim (1901)"
        with open(os.path.join(self.repo, "books", "kim.json"), "w") as f:
            json.dump(kim, f)
        self.booksync("fmt")
        self.booksync("plan", "--out", "../../kim-plan.json")
        self.git("commit", "-qam", "kim's title")
        self.git("switch", "-q", "main")
        self.git("merge", "-q", "--no-ff", "-m", "Merge kim-title", "kim-title")
        # Meanwhile someone edits kim in production (the console, the app).
        self.rest_set(self.production, "kim", "title", {"stringValue": "KIM"})
        before = self.documents(self.production)
        refused = self.booksync("apply", "../../kim-plan.json", expect=4)
        self.checks.check("'kim' (kim.json): the remote changed it since the plan" in refused.stderr, "the drift message:\n" + refused.stderr)
        self.checks.check(self.documents(self.production) == before, "a refused plan wrote")
        held = self.booksync("plan", expect=1)
        self.checks.check("held    " in held.stdout and "the remote changed it since your last pull" in held.stdout, "re-plan:\n" + held.stdout)
        # The scheduled job: production edits found, pulled into a branch, merged.
        self.booksync("status", "--exit-code", expect=1)
        self.git("switch", "-qc", "production-edits")
        pulled = self.booksync("pull", expect=1)
        self.checks.check("conflict" in pulled.stdout, "kim changed on both sides is a conflict:\n" + pulled.stdout)
        self.booksync("resolve", "--theirs", "kim")
        self.git("add", "-A")
        self.git("commit", "-qm", "Edits made in production")
        self.git("switch", "-q", "main")
        self.git("merge", "-q", "--no-ff", "-m", "Merge production-edits", "production-edits")
        self.booksync("status", "--exit-code")

    def promotion(self, compare):
        self.rest_set(self.staging, "emma", "genre", {"stringValue": "romance"})
        if compare:
            differs = self.booksync("compare", "staging", "origin", expect=1)
            self.checks.check("emma" in differs.stdout, "compare names emma:\n" + differs.stdout)
        self.git("switch", "-qc", "promote-staging")
        self.booksync("pull", "--remote", "staging")
        planned = self.booksync("plan", "--out", "../../promote.json")
        self.checks.check("genre: \"fiction\" -> \"romance\"" in planned.stdout, "promotion plan:\n" + planned.stdout)
        self.booksync("apply", "../../promote.json")
        self.checks.check(self.documents(self.production)["emma"]["genre"] == "romance", "emma's genre was not promoted")
        self.booksync("status", "--exit-code")

    def signed_in_as_ci(self):
        """-v names the credentials; the proxy saw only impersonated tokens; no token was printed."""
        verbose = self.booksync("-v", "status")
        self.checks.check("credentials: external_account from" in verbose.stderr and self.account in verbose.stderr,
                          "-v does not name the credentials:\n" + verbose.stderr)
        log = self.server_log()
        self.checks.check(log.get("proxied", 0) > 0 and log.get("sts"), "production was not reached through the STS and IAM stand-ins: %s"
                          % {k: log.get(k) for k in ("proxied", "rejected", "sts")})
        self.checks.check(all(i.get("bearer_kind") == "sts" for i in log.get("impersonations", [])) and log.get("impersonations"),
                          "impersonation was not by the federated token: %s" % log.get("impersonations"))
        for secret in [self.subject_token] + log.get("issued", []):
            self.checks.check(not any(secret in output for output in self.outputs), "a token reached booksync's output")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host", required=True, help="the emulator standing in for production and staging")
    parser.add_argument("--skip-compare", action="store_true", help="leave out booksync compare")
    arguments = parser.parse_args()
    checks = Checks()
    recipe = Recipe(arguments, checks)
    try:
        recipe.sign_in_without_keys()
        recipe.setup()
        recipe.pull_request_and_merge()
        recipe.drift_and_production_edits()
        recipe.promotion(compare=not arguments.skip_compare)
        recipe.signed_in_as_ci()
    finally:
        recipe.stop()
        recipe.scratch.cleanup()
    sys.exit(checks.finish())


if __name__ == "__main__":
    main()
