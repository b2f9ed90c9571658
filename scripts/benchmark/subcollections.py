"""The subcollection scenario of scripts/bench: N books with 3 reviews each as
folders (`init --subcollection reviews`, <doc:CollectionFormat>): first pull, status of
the unchanged collection, and push of 10 changed reviews, each counted by the
proxy (requests, billed reads). Listing takes one names query per page of the
books and one per page of the `reviews` collection group, however many
parents: the request counts show it."""
import os
import shutil

from harness.booksync import make_collection

from .common import Row, run, tree_digest

REVIEWS_PER_BOOK = 3
CHANGED_REVIEWS = 10


def add_reviews(directory, per_book=REVIEWS_PER_BOOK):
    """`<book>/reviews/r1.json` … for every book file, canonical (reviews require nothing but id)."""
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        folder = os.path.join(directory, name[:-5], "reviews")
        os.makedirs(folder)
        for k in range(1, per_book + 1):
            with open(os.path.join(folder, "r%d.json" % k), "w", encoding="utf-8") as f:
                f.write('{\n  "id": "r%d",\n  "rating": %d,\n  "text": "review %d of %s"\n}\n' % (k, k, k, name[:-5]))


class SubcollectionScenarios:
    """Mixin of the Bench class (__main__.py)."""

    def init_subcollections(self, directory, project):
        os.makedirs(directory, exist_ok=True)
        run(self.bs(directory, "-q", "init", "--firestore", project, "--collection", "books", "--subcollection", "reviews"),
            env=self.local_env)

    def subcollections(self, books):
        documents = books * (1 + REVIEWS_PER_BOOK)
        base = os.path.join(self.work, "subcollections-%d" % books)
        gen = os.path.join(base, "gen")
        self.log("subcollections %d: generating %d books with %d reviews each" % (books, books, REVIEWS_PER_BOOK))
        make_collection(gen, books, 3)
        add_reviews(gen)
        expected = tree_digest(gen)
        project = self.project("sub")
        seed = self.fresh(os.path.join(base, "seed"))
        shutil.copytree(gen, seed)
        self.init_subcollections(seed, project)
        pushed = run(self.bs(seed, "push"), env=self.remote_env)
        if "pushed %d" % documents not in pushed.stdout:
            raise SystemExit("bench: the seeding push said:\n%s%s" % (pushed.stdout[-1000:], pushed.stderr[-1000:]))

        self.log("subcollections %d: first pull" % books)
        pull_row = Row("first pull, books with 3 reviews each (N books)", books, "booksync", "")
        directory = None
        for attempt in range(self.args.runs + 1):
            directory = self.fresh(os.path.join(base, "pull"))
            self.init_subcollections(directory, project)
            if attempt == 0:
                r = self.counted(pull_row, self.bs(directory, "pull"), env=self.proxied_env())
            else:
                r = run(self.bs(directory, "pull"), env=self.remote_env)
                pull_row.add(r)
            if tree_digest(directory) != expected:
                raise SystemExit("bench: the pull did not reproduce the books and reviews in " + directory)
        self.rows.append(pull_row)

        self.log("subcollections %d: status, unchanged" % books)
        status_row = Row("status, unchanged (N books with 3 reviews each)", books, "booksync", "")
        self.counted(status_row, self.bs(directory, "status"), env=self.proxied_env())
        for _ in range(self.args.runs):
            status_row.add(run(self.bs(directory, "status"), env=self.remote_env))
        self.rows.append(status_row)

        self.log("subcollections %d: push of %d changed reviews" % (books, CHANGED_REVIEWS))
        push_row = Row("push of 10 changed reviews (N books with 3 reviews each)", books, "booksync", "")
        names = sorted(n[:-5] for n in os.listdir(directory) if n.endswith(".json"))
        step = max(1, len(names) // CHANGED_REVIEWS)
        for attempt in range(self.args.runs + 1):
            for book in names[::step][:CHANGED_REVIEWS]:
                path = os.path.join(directory, book, "reviews", "r2.json")
                with open(path, "w", encoding="utf-8") as f:
                    f.write('{\n  "id": "r2",\n  "rating": %d,\n  "text": "edited"\n}\n' % (10 + attempt))
            if attempt == 0:
                r = self.counted(push_row, self.bs(directory, "push"), env=self.proxied_env())
            else:
                r = run(self.bs(directory, "push"), env=self.remote_env)
                push_row.add(r)
            if "pushed %d" % CHANGED_REVIEWS not in r.stdout:
                raise SystemExit("bench: the push of changed reviews said:\n%s%s" % (r.stdout[-1000:], r.stderr[-1000:]))
        self.rows.append(push_row)
        self.wipe(project)
