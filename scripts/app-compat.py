#!/usr/bin/env python3
"""`init --id-field none` proved with Google's own client (<doc:Firestore> ("The `id` field")).

Usage: app-compat.py --bin BOOKSYNC [--example BOOKSHELF_EXAMPLE] [--host 127.0.0.1:PORT]
       (the host defaults to $FIRESTORE_EMULATOR_HOST, the example to the
       bookshelf-example beside BOOKSYNC)

Apps that read a document's id from its name (`@DocumentID var id: String?` in
Swift, which throws when the document also has an `id` field) need documents
without one. This writes documents with `google-cloud-firestore`, the Python
client Google publishes, against the emulator; booksync pulls them into a
collection made with `init --require none --id-field none`, a file is edited and
a new one added, booksync pushes; then the client reads every document back:
  - the edited document equals what the client wrote except the edited field,
    value for value and type for type (int stays int, float stays float,
    timestamps keep microseconds, bytes, geopoints, references, nested maps,
    arrays, empty containers and null survive);
  - the documents nobody edited were not rewritten (same update time);
  - the new document has the file's fields and its name as id;
  - no document has an `id` field;
  - pull, push and status afterwards have nothing to do.

Then the change-field convention (<doc:Firestore> ("What a command costs")): the client
stamps every write with SERVER_TIMESTAMP, as an app does with
FieldValue.serverTimestamp(); booksync (`init --change-field updatedAt`) pulls
without the field in the files, finds the app's update-mask change by the change
query, and its push stamps the edited document with a server time the client
reads as a datetime.

Then nested maps (<doc:ThreeWaySync>; scripts/app_compat_nested.py): the client's
update masks on nested fields merge with an editor's edits of the same map,
and a nested conflict is named by field path and resolved path by path.

Then subcollections (<doc:CollectionFormat>; scripts/app_compat_subcollections.py): the
client writes reviews (`books/dune/reviews/r1`, one under a missing book) and
updates them with nested masks while an editor edits the review files; pull,
push and a collection-group query in the app agree, and deleting a book leaves
its reviews with a warning.

Then `$schema` (scripts/app_compat_editor_hint.py): an editor's hint in a record
file never reaches the document, survives a merged pull, and alone is no change.

Then a Swift app's DTO (<doc:SwiftLibrary>): the demo catalogue is pushed,
Sources/bookshelf-example runs its two-device flow, and the client reads back
the book the app added through RecordStore (a `BookDTO`, as `booksync schema
--swift BookDTO` prints it for the example's collection, encoded by RecordEncoder) with the same values and types: `Date` as a datetime with its
microseconds, `Data` as bytes, `GeoPoint` and `DocumentReference` as the
client's own types, a nested map, an array, an `Int` as int, a `Double` as
float and an optional left out; and the book both devices changed
holds both changes and the fields the app's DTO does not declare.

The client lives in a virtual environment this script creates under .build/
(kept between runs, rebuilt when the pinned version changes): `python3 -m venv`,
then `pip install google-cloud-firestore==VERSION` from the package registry.
Every step is bounded in time. Prints one line per failed check and
"N passed, M failed"; exits non-zero when a check failed or a step could not run.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid

from app_compat_editor_hint import run_editor_hint
from app_compat_nested import run_nested
from app_compat_subcollections import run_subcollections
from harness import process
from harness.booksync import REPOSITORY, Booksync, environment
from harness.checks import Checks, PinnedVenv
from harness.scratch import scratch as scratch_directory

CLIENT_VERSION = "2.34.1"
VENV = PinnedVenv("app-compat-venv", "google-cloud-firestore", CLIENT_VERSION)
COMMAND_TIMEOUT = 60
RPC_TIMEOUT = 15
RUN_TIMEOUT = 300


def same(a, b):
    """Equal values of equal types, at any depth (1 == 1.0 is not the same here)."""
    if isinstance(a, datetime.datetime) and isinstance(b, datetime.datetime):
        return a == b and a.microsecond == b.microsecond
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def documents(client):
    from google.cloud import firestore  # noqa: F401  (imported in the venv only)
    when = datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=datetime.timezone.utc)
    author = client.document("authors/frank-herbert")
    base = {
        "name": "User",
        "age": 36,
        "score": 4.0,
        "ratio": 0.25,
        "active": True,
        "nothing": None,
        "joined": when,
        "avatar": b"\x00\x01\xfe\xff",
        "home": firestore.GeoPoint(52.5, -3.25),
        "favourite": author,
        "tags": ["a", 1, 2.5, {"k": "v"}],
        "empty_list": [],
        "empty_map": {},
        "prefs": {"theme": "dark", "stats": {"views": 7, "rating": 4.5}},
        "big": 9007199254740993,  # above 2^53: int64 must not pass through a double
        "unicode": "café ✓ \u00e9",
    }
    result = {}
    for i in range(4):
        doc = dict(base)
        doc["name"] = "User %d" % i
        doc["age"] = 30 + i
        result["u%d" % i] = doc
    return result


def run(booksync, host):
    os.environ["FIRESTORE_EMULATOR_HOST"] = host
    from google.cloud import firestore

    checks = Checks()
    project = "app-compat-" + uuid.uuid4().hex[:8]
    client = firestore.Client(project=project)
    users = client.collection("users")
    written = documents(client)
    for doc_id, data in written.items():
        users.document(doc_id).set(data, timeout=RPC_TIMEOUT)
    before = {snap.id: snap for snap in users.stream(timeout=RPC_TIMEOUT)}
    checks.check(set(before) == set(written), "the client wrote %s" % sorted(written))
    for doc_id, snap in sorted(before.items()):
        checks.check(same(snap.to_dict(), written[doc_id]), "%s: the client reads back what it wrote" % doc_id)

    scratch_dir = scratch_directory("app-compat")
    scratch = scratch_dir.name
    try:
        root = os.path.join(scratch, "users")
        os.makedirs(root)
        result = booksync(root, "init", "-q", "--firestore", project, "--collection", "users", "--require", "none", "--id-field", "none")
        if not checks.check(result.returncode == 0, "init: %s" % result.stderr):
            return checks
        result = booksync(root, "pull")
        checks.check(result.returncode == 0 and result.stdout.endswith("pulled 4\n"), "pull: %r %r" % (result.stdout, result.stderr))
        with open(os.path.join(root, "u1.json")) as f:
            record = json.load(f)
        checks.check(record.get("id") == "u1", "the record file keeps its id: %r" % record.get("id"))
        checks.check(record.get("big") == 9007199254740993 and record.get("score") == 4.0, "numbers in the file: %r %r" % (record.get("big"), record.get("score")))
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "status after pull is clean: %r %r" % (result.stdout, result.stderr))

        # An editor changes one field and adds a record.
        with open(os.path.join(root, "u1.json")) as f:
            text = f.read()
        edited = text.replace('"name": "User 1"', '"name": "Renamed"')
        checks.check(edited != text, "u1.json has the name to edit")
        with open(os.path.join(root, "u1.json"), "w") as f:
            f.write(edited)
        with open(os.path.join(root, "added.json"), "w") as f:
            f.write('{"id": "added", "name": "Added", "n": 1, "x": 1.0, "when": {"$timestamp": "2024-05-01T12:00:00.000001Z"}}\n')
        result = booksync(root, "push")
        checks.check(result.returncode == 0 and result.stdout.endswith("pushed 2\n"), "push: %r %r" % (result.stdout, result.stderr))

        after = {snap.id: snap for snap in users.stream(timeout=RPC_TIMEOUT)}
        checks.check(set(after) == set(written) | {"added"}, "documents after push: %s" % sorted(after))
        for doc_id, snap in sorted(after.items()):
            checks.check("id" not in snap.to_dict(), "%s has no id field: %s" % (doc_id, sorted(snap.to_dict())))
        expected = dict(before["u1"].to_dict(), name="Renamed")
        got = after["u1"].to_dict()
        for key in sorted(set(expected) | set(got)):
            checks.check(same(expected.get(key), got.get(key)), "u1.%s: wrote %r, read back %r" % (key, expected.get(key), got.get(key)))
        for doc_id in ("u0", "u2", "u3"):
            checks.check(after[doc_id].update_time == before[doc_id].update_time, "%s was not rewritten" % doc_id)
            checks.check(same(after[doc_id].to_dict(), before[doc_id].to_dict()), "%s reads back as before" % doc_id)
        added = after["added"].to_dict()
        checks.check(same(added.get("n"), 1) and same(added.get("x"), 1.0) and added.get("name") == "Added",
                     "the added document: %r" % added)
        checks.check(isinstance(added.get("when"), datetime.datetime) and added["when"].microsecond == 1, "the added timestamp: %r" % added.get("when"))

        for args in (["push"], ["pull"]):
            result = booksync(root, *args)
            checks.check(result.returncode == 0 and result.stdout == "nothing to do\n", "%s again: %r %r" % (args[0], result.stdout, result.stderr))
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "status at the end: %r" % result.stdout)
    finally:
        scratch_dir.cleanup()
        client.close()
    return checks


def run_change_field(booksync, checks):
    """The change-field convention with Google's client: the app stamps every
    write with SERVER_TIMESTAMP (FieldValue.serverTimestamp() in Swift), and
    booksync's pushes stamp it too (init --change-field updatedAt)."""
    from google.cloud import firestore

    project = "app-compat-changes-" + uuid.uuid4().hex[:8]
    client = firestore.Client(project=project)
    books = client.collection("books")
    for i in range(3):
        books.document("b%d" % i).set({"id": "b%d" % i, "title": "Book %d" % i, "author": "A", "genre": "g",
                                       "updatedAt": firestore.SERVER_TIMESTAMP}, timeout=RPC_TIMEOUT)
    scratch_dir = scratch_directory("app-compat")
    scratch = scratch_dir.name
    try:
        root = os.path.join(scratch, "books")
        os.makedirs(root)
        result = booksync(root, "init", "-q", "--firestore", project, "--collection", "books", "--change-field", "updatedAt")
        if not checks.check(result.returncode == 0, "init --change-field: %s" % result.stderr):
            return
        result = booksync(root, "pull")
        checks.check(result.returncode == 0 and result.stdout.endswith("pulled 3\n"), "pull of stamped books: %r %r" % (result.stdout, result.stderr))
        with open(os.path.join(root, "b0.json")) as f:
            checks.check("updatedAt" not in json.load(f), "record files leave the change field out")

        # The app updates one field the way apps do (an update mask), stamping it.
        books.document("b1").update({"title": "Retitled by the app", "updatedAt": firestore.SERVER_TIMESTAMP}, timeout=RPC_TIMEOUT)
        result = booksync(root, "-v", "status", "--short")
        checks.check(result.stdout == " M b1\n", "status finds the app's change: %r" % result.stdout)
        checks.check("read the 1 document whose 'updatedAt' is at or after" in result.stderr or "read the 3 documents whose 'updatedAt'" in result.stderr,
                     "status read only the changes: %r" % result.stderr)
        result = booksync(root, "pull")
        with open(os.path.join(root, "b1.json")) as f:
            checks.check(json.load(f).get("title") == "Retitled by the app", "pull applied the app's change")

        # An editor changes a file; booksync's push stamps the document for the app.
        path = os.path.join(root, "b2.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace('"Book 2"', '"Edited by hand"'))
        before = books.document("b2").get(timeout=RPC_TIMEOUT).get("updatedAt")
        result = booksync(root, "push")
        checks.check(result.returncode == 0 and result.stdout.endswith("pushed 1\n"), "push: %r %r" % (result.stdout, result.stderr))
        snap = books.document("b2").get(timeout=RPC_TIMEOUT).to_dict()
        stamp = snap.get("updatedAt")
        checks.check(snap.get("title") == "Edited by hand", "the app reads the edit: %r" % snap)
        checks.check(isinstance(stamp, datetime.datetime) and isinstance(before, datetime.datetime) and stamp > before,
                     "push set updatedAt to the server time, as a timestamp the app reads as a date: %r after %r" % (stamp, before))
        with open(path) as f:
            checks.check("updatedAt" not in json.load(f), "the pushed file still has no updatedAt")
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "status at the end: %r %r" % (result.stdout, result.stderr))
    finally:
        scratch_dir.cleanup()
        client.close()


def run_swift_app(booksync, example_path, checks):
    """A DTO encoded by RecordEncoder, saved by RecordStore and pushed by the
    bookshelf example, read back by Google's client."""
    from google.cloud import firestore

    project = "app-compat-swift-" + uuid.uuid4().hex[:8]
    client = firestore.Client(project=project)
    scratch_dir = scratch_directory("app-compat")
    scratch = scratch_dir.name
    try:
        catalogue = os.path.join(scratch, "catalogue")
        shutil.copytree(os.path.join(REPOSITORY, "fixtures", "demo", "books"), catalogue)
        for args in (["init", "-q", "--firestore", project, "--collection", "books"], ["push", "-q"]):
            result = booksync(catalogue, *args)
            if not checks.check(result.returncode == 0, "catalogue %s: %s" % (args[0], result.stderr)):
                return
        result = process.run([example_path, project, os.path.join(scratch, "laptop"), os.path.join(scratch, "phone")], cwd=scratch,
                             env=booksync.env, timeout=COMMAND_TIMEOUT)
        checks.check(result.returncode == 0 and result.stdout.endswith("status on both devices: clean, in sync\n"),
                     "bookshelf-example: %r %r" % (result.stdout, result.stderr))
        # The example's BookDTO is what `booksync schema --swift` prints for the collection it made.
        result = booksync(os.path.join(scratch, "laptop"), "schema", "--swift", "BookDTO")
        with open(os.path.join(REPOSITORY, "Sources", "bookshelf-example", "BookDTO.swift")) as f:
            checks.check(result.returncode == 0 and result.stdout == f.read(),
                         "Sources/bookshelf-example/BookDTO.swift is not what 'booksync schema --swift BookDTO' prints: %r" % result.stdout)

        books = client.collection("books")
        added = books.document("a-memory-called-empire").get(timeout=RPC_TIMEOUT)
        checks.check(added.exists, "the book the app added is a document")
        expected = {
            "id": "a-memory-called-empire",
            "title": "A Memory Called Empire",
            "author": "Arkady Martine",
            "genre": "science fiction",
            "published": datetime.datetime(2019, 3, 26, 0, 0, 0, 123456, tzinfo=datetime.timezone.utc),
            "rating": 4.1,
            "pages": 462,
            "tags": ["empire", "memory", "poetry"],
            "authorRef": client.document("authors/arkady-martine"),
            "firstPrinting": {"copies": 15000, "publisher": client.document("publishers/tor")},
            "cover": b"\x89PNG\x00\xff",
            "setting": firestore.GeoPoint(41.0082, 28.9784),
        }
        got = added.to_dict() or {}
        for key in sorted(set(expected) | set(got)):
            checks.check(same(expected.get(key), got.get(key)),
                         "BookDTO.%s: the app wrote %r, the client reads %r" % (key, expected.get(key), got.get(key)))
        dune = books.document("dune").get(timeout=RPC_TIMEOUT).to_dict() or {}
        checks.check(same(dune.get("rating"), 4.75) and same(dune.get("pages"), 900),
                     "dune holds the editor's rating and the phone's pages: %r %r" % (dune.get("rating"), dune.get("pages")))
        checks.check(dune.get("isbn") == "978-0441013593" and isinstance(dune.get("sequel"), type(client.document("a/b"))),
                     "dune keeps the fields BookDTO does not declare: %r" % sorted(dune))
    finally:
        scratch_dir.cleanup()
        client.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="the booksync executable")
    parser.add_argument("--example", help="the bookshelf-example executable (default: beside --bin)")
    parser.add_argument("--host", default=os.environ.get("FIRESTORE_EMULATOR_HOST"), help="the emulator, host:port")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if not options.host:
        parser.error("--host or $FIRESTORE_EMULATOR_HOST is needed (scripts/emulator start DIR)")
    bin_path = os.path.abspath(options.bin)
    example_path = os.path.abspath(options.example or os.path.join(os.path.dirname(bin_path), "bookshelf-example"))
    if not options.in_venv:
        try:
            VENV.run_inside(__file__, ["--bin", bin_path, "--example", example_path, "--host", options.host])
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
            print("app-compat: cannot install %s into %s: %s" % (VENV.requirement, VENV.path, error), file=sys.stderr)
            return 2

    def give_up(signum, frame):
        raise TimeoutError("gave up after %d s" % RUN_TIMEOUT)
    signal.signal(signal.SIGALRM, give_up)
    signal.alarm(RUN_TIMEOUT)
    # booksync's environment: the emulator, no colour, no credentials or settings of the caller.
    booksync = Booksync(bin_path, env=environment(options.host, drop=("GOOGLE_", "GCLOUD_", "BOOKSYNC_")), timeout=COMMAND_TIMEOUT)
    checks = run(booksync, options.host)
    run_change_field(booksync, checks)
    run_nested(booksync, checks)
    run_subcollections(booksync, checks)
    run_editor_hint(booksync, checks)
    run_swift_app(booksync, example_path, checks)
    signal.alarm(0)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
