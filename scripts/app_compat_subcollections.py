"""Subcollections with Google's client (<doc:CollectionFormat>), for scripts/app-compat.py.

An app writes books and their reviews (`books/dune/reviews/r1`), including a
review under a book document that does not exist, and updates reviews with
nested update masks (`stats.likes`) while an editor edits the review files
(`dune/reviews/r1.json`): pull brings the reviews into folders, merges the
nested edits key by key, push publishes by path, and the client reads back
what booksync pushed, types intact. Deleting a book leaves its reviews, in
Firestore and in the folder, and booksync says so.
"""

import json
import os
import uuid

from harness.scratch import scratch as scratch_directory

RPC_TIMEOUT = 15


def read_json(root, relative):
    with open(os.path.join(root, relative)) as f:
        return json.load(f)


def write_json(root, relative, record):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(record, f, indent=2, ensure_ascii=False)


def run_subcollections(booksync, checks):
    """`booksync`: a harness.booksync.Booksync against the emulator the client uses."""
    from google.cloud import firestore

    project = "app-compat-sub-" + uuid.uuid4().hex[:8]
    client = firestore.Client(project=project)
    books = client.collection("books")
    books.document("dune").set({"id": "dune", "title": "Dune", "author": "Frank Herbert", "genre": "sf"}, timeout=RPC_TIMEOUT)
    reviews = books.document("dune").collection("reviews")
    reviews.document("r1").set({"id": "r1", "rating": 4, "stats": {"likes": 1, "views": 10}}, timeout=RPC_TIMEOUT)
    reviews.document("r2").set({"id": "r2", "rating": 5, "stats": {"likes": 0, "views": 0}}, timeout=RPC_TIMEOUT)
    # A review of a book that has no document: Firestore allows it, and so does booksync.
    books.document("ghost").collection("reviews").document("g1").set({"id": "g1", "rating": 2}, timeout=RPC_TIMEOUT)
    scratch_dir = scratch_directory("app-compat")
    scratch = scratch_dir.name
    try:
        root = os.path.join(scratch, "books")
        os.makedirs(root)
        result = booksync(root, "init", "-q", "--firestore", project, "--collection", "books", "--subcollection", "reviews",
                          "--subcollection-require", "reviews:rating:integer")
        if not checks.check(result.returncode == 0, "init --subcollection: %s" % result.stderr):
            return
        result = booksync(root, "pull")
        checks.check(result.returncode == 0, "first pull of books with reviews: %r %r" % (result.stdout, result.stderr))
        checks.check(read_json(root, "dune/reviews/r1.json") == {"id": "r1", "rating": 4, "stats": {"likes": 1, "views": 10}},
                     "the review is a file in the book's folder")
        checks.check(os.path.exists(os.path.join(root, "ghost/reviews/g1.json")) and not os.path.exists(os.path.join(root, "ghost.json")),
                     "a review of a missing book is pulled into a folder without a parent file")

        # The app likes r1 through a nested update mask while the editor changes its rating.
        record = read_json(root, "dune/reviews/r1.json")
        record["rating"] = 5
        write_json(root, "dune/reviews/r1.json", record)
        reviews.document("r1").update({"stats.likes": 2}, timeout=RPC_TIMEOUT)
        result = booksync(root, "status", "--short")
        checks.check(result.stdout == "MM dune/reviews/r1\n", "status names the review by its path: %r" % result.stdout)
        result = booksync(root, "pull")
        checks.check(result.returncode == 0, "pull merges the review: %r %r" % (result.stdout, result.stderr))
        checks.check(read_json(root, "dune/reviews/r1.json") == {"id": "r1", "rating": 5, "stats": {"likes": 2, "views": 10}},
                     "the review file holds both changes")
        # The editor writes a new review; push publishes both by path.
        write_json(root, "dune/reviews/r3.json", {"id": "r3", "rating": 3, "text": "slow start"})
        result = booksync(root, "push")
        checks.check(result.returncode == 0 and "dune/reviews/r3" in result.stdout, "push of the reviews: %r %r" % (result.stdout, result.stderr))
        r1 = reviews.document("r1").get(timeout=RPC_TIMEOUT).to_dict()
        checks.check(r1 == {"id": "r1", "rating": 5, "stats": {"likes": 2, "views": 10}} and type(r1["rating"]) is int,
                     "the app reads the merged review, integers still integers: %r" % r1)
        r3 = reviews.document("r3").get(timeout=RPC_TIMEOUT).to_dict()
        checks.check(r3 == {"id": "r3", "rating": 3, "text": "slow start"}, "the app reads the new review: %r" % r3)

        # A collection-group query, as an app would run it, sees every review.
        names = sorted(d.reference.path for d in client.collection_group("reviews").stream(timeout=RPC_TIMEOUT))
        checks.check(names == ["books/dune/reviews/r1", "books/dune/reviews/r2", "books/dune/reviews/r3", "books/ghost/reviews/g1"],
                     "the app's collection-group query sees what booksync wrote: %r" % names)

        # The app deletes the book: its reviews stay in Firestore, and in the folder after a pull.
        books.document("dune").delete(timeout=RPC_TIMEOUT)
        result = booksync(root, "pull")
        checks.check(result.returncode == 0 and "3 subcollection records remain" in result.stderr,
                     "pull of a deleted book warns about its reviews: %r %r" % (result.stdout, result.stderr))
        checks.check(not os.path.exists(os.path.join(root, "dune.json")) and os.path.exists(os.path.join(root, "dune/reviews/r2.json")),
                     "the book's file is gone, its reviews' files are not")
        checks.check(reviews.document("r2").get(timeout=RPC_TIMEOUT).exists, "the reviews are still in Firestore")
        result = booksync(root, "status", "--short")
        checks.check(result.returncode == 0 and result.stdout == "", "status at the end: %r %r" % (result.stdout, result.stderr))
    finally:
        scratch_dir.cleanup()
        client.close()
