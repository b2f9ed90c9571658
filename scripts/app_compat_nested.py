"""Nested maps with Google's client (<doc:ThreeWaySync>), for scripts/app-compat.py.

An app updates nested fields through update masks (`stats.views`, and a key
with a dot in it, `stats.`x.y``) while an editor changes other keys of the same
map in the record file: pull merges them key by key and push publishes the
merge; the same nested key changed on both sides is a conflict named by its
field path, which `resolve --theirs` settles path by path.
"""

import json
import os
import uuid

from harness.scratch import scratch as scratch_directory

RPC_TIMEOUT = 15


def edit_stats(root, changes):
    """The editor's hand edit of dune.json: some keys of the `stats` map."""
    path = os.path.join(root, "dune.json")
    with open(path) as f:
        record = json.load(f)
    record["stats"].update(changes)
    with open(path, "w") as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
    return record


def run_nested(booksync, checks):
    """`booksync`: a harness.booksync.Booksync against the emulator the client uses."""
    from google.cloud import firestore

    project = "app-compat-nested-" + uuid.uuid4().hex[:8]
    client = firestore.Client(project=project)
    dune = client.collection("books").document("dune")
    dune.set({"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf",
              "stats": {"rating": 4, "views": 10, "x.y": "base"}}, timeout=RPC_TIMEOUT)
    scratch_dir = scratch_directory("app-compat")
    scratch = scratch_dir.name
    try:
        root = os.path.join(scratch, "books")
        os.makedirs(root)
        result = booksync(root, "init", "-q", "--firestore", project, "--collection", "books")
        if not checks.check(result.returncode == 0, "init: %s" % result.stderr):
            return
        checks.check(booksync(root, "pull").returncode == 0, "first pull")

        # Different keys of one map: merged.
        edit_stats(root, {"rating": 5})
        dune.update({"stats.views": 11}, timeout=RPC_TIMEOUT)
        result = booksync(root, "status", "--short")
        checks.check(result.stdout == "MM dune\n", "status calls both sides' nested changes mergeable: %r" % result.stdout)
        result = booksync(root, "pull")
        checks.check(result.returncode == 0, "pull merges nested keys: %r %r" % (result.stdout, result.stderr))
        with open(os.path.join(root, "dune.json")) as f:
            stats = json.load(f)["stats"]
        checks.check(stats == {"rating": 5, "views": 11, "x.y": "base"}, "the file holds both changes: %r" % stats)
        result = booksync(root, "push")
        checks.check(result.returncode == 0, "push of the merge: %r %r" % (result.stdout, result.stderr))
        stats = dune.get(timeout=RPC_TIMEOUT).to_dict()["stats"]
        checks.check(stats == {"rating": 5, "views": 11, "x.y": "base"} and all(type(v) is int for k, v in stats.items() if k != "x.y"),
                     "the app reads both changes, integers still integers: %r" % stats)

        # The same nested keys changed differently: a conflict named by path.
        edit_stats(root, {"rating": 2, "x.y": "editor"})
        dune.update({"stats.rating": 3, client.field_path("stats", "x.y"): "app"}, timeout=RPC_TIMEOUT)
        result = booksync(root, "status", "--json")
        records = json.loads(result.stdout)["records"]
        checks.check([r.get("conflictFields") for r in records] == [["stats.rating", "stats.`x.y`"]],
                     "status names the conflicting paths as Firestore does: %r" % records)
        result = booksync(root, "pull")
        checks.check(result.returncode == 1 and "'stats.rating', 'stats.`x.y`'" in result.stdout,
                     "pull stops on the nested conflict: %r %r" % (result.stdout, result.stderr))
        result = booksync(root, "resolve", "dune", "--theirs")
        checks.check(result.returncode == 0, "resolve --theirs: %r %r" % (result.stdout, result.stderr))
        result = booksync(root, "push")
        checks.check(result.returncode == 0, "push after resolve: %r %r" % (result.stdout, result.stderr))
        stats = dune.get(timeout=RPC_TIMEOUT).to_dict()["stats"]
        checks.check(stats == {"rating": 3, "views": 11, "x.y": "app"}, "the app's values won at both paths: %r" % stats)
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "status at the end: %r %r" % (result.stdout, result.stderr))
    finally:
        scratch_dir.cleanup()
        client.close()
