"""`$schema` in a record file, end to end (<doc:CollectionFormat> ("Editing records")).

Part of scripts/app-compat.py. A record whose first key is the editor's
`"$schema"` is pushed; Google's client reads the document and finds no such
field; the client edits the document, and pull merges that edit into the file,
which keeps its `$schema` first; changing only the hint is no change (status
clean, push has nothing to send, the document is not rewritten); a document
that has a `$schema` field of its own is refused by pull, never written into
a file where it would read as a hint.
"""
import json
import os
import uuid

from harness.scratch import scratch as scratch_directory

RPC_TIMEOUT = 15
HINT = "./.booksync/record.schema.json"


def run_editor_hint(booksync, checks):
    """`booksync`: a harness.booksync.Booksync against the emulator the client uses."""
    from google.cloud import firestore

    project = "app-compat-hint-" + uuid.uuid4().hex[:8]
    client = firestore.Client(project=project)
    scratch_dir = scratch_directory("app-compat-hint")
    root = scratch_dir.name
    try:
        result = booksync(root, "-q", "init", "--firestore", project, "--collection", "books")
        if not checks.check(result.returncode == 0, "hint: init: %r" % result.stderr):
            return
        path = os.path.join(root, "dune.json")
        with open(path, "w") as f:
            f.write('{\n  "$schema": "%s",\n  "id": "dune",\n  "title": "Dune",\n  "author": "Frank Herbert",\n  "genre": "sf",\n  "year": 1965\n}\n' % HINT)
        result = booksync(root, "push", "-q")
        checks.check(result.returncode == 0, "hint: push: %r" % result.stderr)
        document = client.collection("books").document("dune")
        snapshot = document.get(timeout=RPC_TIMEOUT)
        data = snapshot.to_dict() or {}
        checks.check(snapshot.exists and "$schema" not in data and data.get("year") == 1965,
                     "hint: the document has the record's fields and no $schema: %r" % data)

        # A remote edit merges; the file keeps its hint first.
        document.update({"year": 1966}, timeout=RPC_TIMEOUT)
        result = booksync(root, "pull", "-q")
        checks.check(result.returncode == 0, "hint: pull: %r" % result.stderr)
        with open(path) as f:
            text = f.read()
        checks.check(text.startswith('{\n  "$schema": "%s",\n  "id": "dune",' % HINT) and json.loads(text).get("year") == 1966,
                     "hint: the pulled file keeps $schema first and has the remote edit: %r" % text)
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "hint: status after pull is clean: %r %r" % (result.stdout, result.stderr))

        # Changing only the hint is no change to the record.
        before = document.get(timeout=RPC_TIMEOUT).update_time
        with open(path, "w") as f:
            f.write(text.replace(HINT, "https://example.com/book.schema.json"))
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "hint: a changed hint alone is no change: %r" % result.stdout)
        result = booksync(root, "push")
        checks.check(result.returncode == 0 and "nothing to do" in (result.stdout + result.stderr),
                     "hint: push has nothing to send: %r %r" % (result.stdout, result.stderr))
        checks.check(document.get(timeout=RPC_TIMEOUT).update_time == before, "hint: the document was not rewritten")

        # A document with a $schema field of its own is refused, not pulled into a file.
        client.collection("books").document("odd").set({"id": "odd", "title": "T", "author": "A", "genre": "g", "$schema": "x"},
                                                       timeout=RPC_TIMEOUT)
        result = booksync(root, "pull")
        checks.check(not os.path.exists(os.path.join(root, "odd.json")) and "$schema" in (result.stdout + result.stderr),
                     "hint: a document with a $schema field is refused and named: %r %r" % (result.stdout, result.stderr))
    finally:
        scratch_dir.cleanup()
        client.close()
