"""The whole-database clone scenario of scripts/bench (--whole-database N):
`booksync clone --firestore P DIR` without --collection (<doc:WholeProject>) on a
database of 20 root collections, some with subcollections, N documents in all,
against the minimal client's `clone-db` (reference.py) on the same database in
the same run; and `clone --dry-run`, whose printed discovery cost, plus the
documents, should be what the clone is billed.

The database (database_layout): with n = N // 25, every root collection holds n
documents (the last one also the remainder); the first n/2 documents of books,
products and stores have 2 `reviews` each (n per collection), the first n/2 of
orders 2 `notes` each, and the first n/2 reviews of books 2 `likes` each
(books/B/reviews/R/likes/L, two levels deep): 20n + 3n + n + n = 25n. Records
need nothing but id (the clone's default), and carry no title, author or genre,
so that the reference's canonical form (which leads with those when present) is
booksync's. Seeded by :commit of 500 writes from this process (not timed)."""
import hashlib
import os
import random
import re
import time

from harness.emulator import Client

from . import reference as ref
from .common import Row, fmt_ratio, fmt_time, load_average, run
from .status import Timed

ROOTS = ["authors", "books", "carts", "comments", "customers", "events", "invoices", "libraries", "loans", "messages",
         "notifications", "orders", "payments", "products", "publishers", "sessions", "shelves", "stores", "tickets",
         "users"]
WITH_REVIEWS = ("books", "products", "stores")
WITH_NOTES = ("orders",)
WITH_LIKES = ("books",)  # books/B/reviews/R/likes/L
TARGET_RATIO = 1.2  # the issue's: ≤ 1.2× the minimal client
FULL_SIZE = 200_000  # the size, where the targets apply
# booksync's request timeout in this scenario (default 30 s): at 200,000 documents each
# discovery query makes the emulator scan the whole database (2.5 s on a quiet machine),
# and under the load of other builds (load average 47) a page took over 30 s and the
# dry run gave up after its retries.
REQUEST_TIMEOUT = "300"
WORDS = ("river stone night glass winter garden silver empire shadow harbor orchard letter mirror "
         "signal desert lantern archive comet meadow engine").split()


def record(rng, doc_id):
    return {
        "id": doc_id,
        "name": " ".join(rng.choice(WORDS).capitalize() for _ in range(rng.randint(1, 4))),
        "year": rng.randint(1800, 2024),
        "score": round(rng.uniform(1, 5), 2),
        "tags": sorted(rng.sample(WORDS, rng.randint(0, 3))),
        "summary": " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 50))),
    }


def database_layout(total, seed=5):
    """Yields (document path, record) for the whole database, `total` documents."""
    n = total // 25
    rng = random.Random(seed)
    for k, root in enumerate(ROOTS):
        count = n + (total - 25 * n if k == len(ROOTS) - 1 else 0)
        for i in range(count):
            doc = "d-%06d" % i
            yield "%s/%s" % (root, doc), record(rng, doc)
        parents = ["d-%06d" % i for i in range(n // 2)]
        for sub in (["reviews"] if root in WITH_REVIEWS else []) + (["notes"] if root in WITH_NOTES else []):
            for parent in parents:
                for j in (1, 2):
                    yield "%s/%s/%s/%s-%d" % (root, parent, sub, sub[0], j), record(rng, "%s-%d" % (sub[0], j))
        if root in WITH_LIKES:
            reviews = [(p, "r-%d" % j) for p in parents for j in (1, 2)][: n // 2]
            for parent, review in reviews:
                for j in (1, 2):
                    yield ("%s/%s/reviews/%s/likes/l-%d" % (root, parent, review, j)), record(rng, "l-%d" % j)


def seed_database(host, project, total):
    """Writes the database of database_layout(total) by :commit of 500 writes; returns the
    documents written and the distinct subcollection ids."""
    count, groups = 0, set()
    with Client(host, project, timeout=600) as client:
        writes = []
        for path, rec in database_layout(total):
            writes.append({"update": {"name": client.name(path),
                                      "fields": {k: ref.to_value(v, client.database) for k, v in rec.items()}}})
            groups.update(path.split("/")[2::2])
            count += 1
            if len(writes) == 500:
                client.commit(writes)
                writes = []
        if writes:
            client.commit(writes)
    return count, sorted(groups)


def tree_files(directory):
    """Relative paths of every record file below `directory`, in dot-free folders."""
    found = []
    for parent, folders, files in os.walk(directory):
        folders[:] = [f for f in folders if not f.startswith(".")]
        found += [os.path.relpath(os.path.join(parent, f), directory) for f in files
                  if f.endswith(".json") and not f.startswith(".")]
    return sorted(found)


def tree_digest_deep(directory):
    """sha256 over the relative paths and bytes of every record file at any depth, and their count."""
    h = hashlib.sha256()
    files = tree_files(directory)
    for rel in files:
        h.update(rel.encode() + b"\0")
        with open(os.path.join(directory, rel), "rb") as f:
            h.update(f.read())
    return h.hexdigest(), len(files)


DRY_RUN_COST = re.compile(r"the clone costs about ([\d,]+) billed reads: ([\d,]+) to discover, ([\d,]+) to pull \((\d+) quer")


class WholeDatabaseScenarios:
    """Mixin of the Bench class (__main__.py)."""

    def emulator_discovery_cost(self, total, project):
        """What the emulator alone spends on discovery queries, sent from this process:
        booksync's first discovery page of one root collection (names of everything below
        `authors`, a __name__ range, limit 10,000), the same with limit 1, and the minimal
        client's one names-only query over the whole database. The emulator answers a
        kindless query by scanning the whole database, whatever the range."""
        with Client(self.host, project, timeout=1200) as client:
            prefix = client.root + "/authors/"
            names = {"fields": [{"fieldPath": "__name__"}]}
            ranged = {"from": [{"allDescendants": True}], "select": names,
                      "where": {"compositeFilter": {"op": "AND", "filters": [
                          {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "GREATER_THAN_OR_EQUAL",
                                           "value": {"referenceValue": prefix + "\u0000"}}},
                          {"fieldFilter": {"field": {"fieldPath": "__name__"}, "op": "LESS_THAN",
                                           "value": {"referenceValue": prefix + "\U0010FFFF"}}}]}},
                      "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]}
            timed = []
            for what, query in (("discovery page below one root collection (as booksync)", dict(ranged, limit=10_000)),
                                ("the same with limit 1", dict(ranged, limit=1)),
                                ("one names query over the database (as the minimal client)",
                                 {"from": [{"allDescendants": True}], "select": names})):
                client.query(query)  # once unmeasured
                start = time.perf_counter()
                found = len(client.query(query))
                timed.append(("%s: %s names" % (what, "{:,}".format(found)), time.perf_counter() - start))
        for i, (what, seconds) in enumerate(timed):
            row = Row("emulator alone: discovery queries" if i == 0 else "", total, what, "")
            row.add(Timed(seconds))
            self.rows.append(row)

    def clone_cmd(self, project, directory, *extra):
        return [self.bin, "clone", "--firestore", project] + list(extra) + [directory]

    def whole_database(self, total):
        runs = self.args.runs
        base = os.path.join(self.work, "whole-%d" % total)
        os.makedirs(base)
        project = self.project("whole")
        env = dict(self.remote_env, BOOKSYNC_REQUEST_TIMEOUT=REQUEST_TIMEOUT)
        proxied = dict(self.proxied_env(), BOOKSYNC_REQUEST_TIMEOUT=REQUEST_TIMEOUT)
        self.log("whole database %d: seeding %d root collections" % (total, len(ROOTS)))
        documents, groups = seed_database(self.host, project, total)

        # The dry run: the layout, and what discovery cost (its requests are the clone's discovery).
        self.log("whole database %d: clone --dry-run" % total)
        dry = self.fresh(os.path.join(base, "dry"))
        r = run(self.clone_cmd(project, dry, "--dry-run"), env=env)
        m = DRY_RUN_COST.search(r.stdout)
        if not m or os.path.exists(dry):
            raise SystemExit("bench: clone --dry-run said (or wrote %s):\n%s%s" % (dry, r.stdout[-2000:], r.stderr[-1000:]))
        estimate, discovery, pull_estimate, queries = (int(g.replace(",", "")) for g in m.groups())
        d_row = Row("", total, "booksync clone --dry-run (discovery only)", "")
        d_row.add(r)
        self.counted(d_row, self.clone_cmd(project, self.fresh(os.path.join(base, "dry")), "--dry-run"), env=proxied)

        # The counted pass is also the warm-up and the check: booksync's clone and both
        # reference clones write the same files (booksync's count is the documents').
        b_row = Row("whole-database clone (%d root collections with subcollections)" % len(ROOTS), total, "booksync", "")
        m_row = Row("", total, "minimal client (discovering)", "")
        t_row = Row("", total, "minimal client (told the subcollection ids)", "")

        def bs_clone(counted_row=None):
            d = self.fresh(os.path.join(base, "bs"))
            if counted_row is not None:
                r = self.counted(counted_row, self.clone_cmd(project, d), env=proxied)
            else:
                r = run(self.clone_cmd(project, d), env=env)
            if "Cloned %d collections" % len(ROOTS) not in r.stdout:
                raise SystemExit("bench: the whole-database clone said:\n%s%s" % (r.stdout[-2000:], r.stderr[-1000:]))
            return d, r

        def ref_clone(told, host=None):
            cmd = self.refcmd("clone-db", self.fresh(os.path.join(base, "ref-told" if told else "ref")), project, host=host)
            return cmd + (["--groups", ",".join(groups)] if told else [])

        self.log("whole database %d: counted pass (checks booksync's files against the minimal client's)" % total)
        d, _ = bs_clone(b_row)
        expected = tree_digest_deep(d)
        if expected[1] != documents:
            raise SystemExit("bench: the whole-database clone wrote %d record files for %d documents" % (expected[1], documents))
        for told, row in ((False, m_row), (True, t_row)):
            cmd = ref_clone(told, host=self.proxy.host)
            self.counted(row, cmd)
            got = tree_digest_deep(cmd[cmd.index("clone-db") + 1])
            if got != expected:
                raise SystemExit("bench: the minimal client's clone-db%s differs from booksync's clone (%d files, %d)" % (
                    " --groups" if told else "", got[1], expected[1]))
        for i in range(runs):
            self.log("whole database %d: run %d" % (total, i + 1))
            m_row.add(run(ref_clone(False)))
            b_row.add(bs_clone()[1])
            t_row.add(run(ref_clone(True)))
        dry_runs = [d_row.walls[0]]
        d_row.ratio = "%.0f%% of the clone" % (100 * d_row.wall / b_row.wall)

        applies = total == FULL_SIZE
        size = "{:,}".format(total)
        ratio = b_row.wall / m_row.wall
        b_row.ratio = "%s minimal (%s told)" % (fmt_ratio(ratio), fmt_ratio(b_row.wall / t_row.wall))
        b_row.target = "≤ %.1f× minimal; billed = documents + dry run's discovery" % TARGET_RATIO
        verdict = self.target("whole-database clone of %s documents ≤ %.1f× the minimal client (discovering)" % (size, TARGET_RATIO),
                              "%s vs %s (%s; %s against the client told the subcollection ids, %s)" % (
                                  fmt_time(b_row.wall), fmt_time(m_row.wall), fmt_ratio(ratio), fmt_ratio(b_row.wall / t_row.wall),
                                  fmt_time(t_row.wall)), ratio <= TARGET_RATIO, applies)
        billed = b_row.counts["billed_reads"]
        dry_billed = d_row.counts["billed_reads"]
        expected_reads = documents + discovery
        verdict2 = self.target(
            "billed reads of the whole-database clone of %s documents = documents + the discovery cost `clone --dry-run` printed" % size,
            "%s billed vs %s + %s = %s (the dry run's estimate of the whole clone: %s = %s to discover + %s to pull in %s queries; "
            "the dry run itself was billed %s)" % tuple("{:,}".format(x) for x in (
                billed, documents, discovery, expected_reads, estimate, discovery, pull_estimate, queries, dry_billed)),
            billed == expected_reads)
        b_row.result = verdict if verdict == verdict2 else "%s / %s" % (verdict, verdict2)
        self.rows += [b_row, m_row, t_row, d_row]
        self.emulator_discovery_cost(total, project)
        kinds = lambda row: ", ".join("%s %d" % (k, v["requests"]) for k, v in sorted(row.counts["by_kind"].items()))
        self.notes.append(
            "Whole-database clone of %s documents (%d root collections, subcollection ids %s): booksync made %d requests (%s), "
            "the minimal client %d (%s) discovering, %d (%s) told the ids; discovery alone (the dry run) took %s of the "
            "clone's %s. CPU time (user + system, medians): booksync %s, minimal client %s discovering, %s told; load "
            "average when the scenario ended: %s." % (
                size, len(ROOTS), ", ".join(groups), b_row.counts["requests"], kinds(b_row), m_row.counts["requests"],
                kinds(m_row), t_row.counts["requests"], kinds(t_row), fmt_time(dry_runs[0]), fmt_time(b_row.wall),
                fmt_time(b_row.cpu), fmt_time(m_row.cpu), fmt_time(t_row.cpu), load_average()))
        self.wipe(project)
