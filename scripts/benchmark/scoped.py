"""The scoped-pull scenario of scripts/bench (--scoped-documents N, --scoped-matching M):
a collection of N book records of which M match the scope `shard == 7` (every
record carries `shard` = its number modulo N // M), cloned with `booksync clone
--collection books --where 'shard == 7'` against the minimal client running the
same filtered :runQuery (reference.py `pull --where`); then, on that clone, a
`status` and a `pull` after 10 remote changes inside the scope, against the
minimal client's filtered full pull. Each is counted once through the proxy:
the clone's billed reads should follow the M matching documents, not the N
(<doc:WholeProject>, "Scopes by query")."""
import importlib.util
import os
import random
import time

from harness.booksync import MAKE_COLLECTION
from harness.emulator import Client

from . import reference as ref
from .common import CHANGED, Row, fmt_ratio, fmt_time, load_average, run
from .status import Timed
from .whole_database import tree_digest_deep

SCOPE_FIELD, SCOPE_VALUE = "shard", 7
FULL_SIZE = (100_000, 1_000)  # the issue's: 1,000 of 100,000 match


def make_record_function():
    """make(i, rng) of scripts/make-collection.py (a file name with a hyphen, loaded by path)."""
    spec = importlib.util.spec_from_file_location("make_collection", MAKE_COLLECTION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make


def seed_sharded(host, project, n, shards):
    """n book records with `shard` = i % shards, by :commit of 500 writes; returns the matching ids."""
    make = make_record_function()
    rng = random.Random(7)
    matching = []
    with Client(host, project, timeout=600) as client:
        writes = []
        for i in range(n):
            rec = make(i, rng)
            rec[SCOPE_FIELD] = i % shards
            if rec[SCOPE_FIELD] == SCOPE_VALUE:
                matching.append(rec["id"])
            writes.append({"update": {"name": client.name("books/" + rec["id"]),
                                      "fields": {k: ref.to_value(v, client.database) for k, v in rec.items()}}})
            if len(writes) == 500:
                client.commit(writes)
                writes = []
        if writes:
            client.commit(writes)
    return matching


class ScopedScenarios:
    """Mixin of the Bench class (__main__.py)."""

    def emulator_scope_cost(self, n, project, scope, label):
        """What the emulator alone spends on the scope's queries, sent from this process:
        the filtered query whole (the minimal client's), with limit 1, and its count().
        The emulator has no index on the field: every query scans the collection, so a
        clone's cost there grows with its queries (pages and the count), not only with the
        matching documents; a real Firestore serves them from the field's index."""
        with Client(self.host, project, timeout=1200) as client:
            where = ref.field_filter(scope, client.database)
            query = {"from": [{"collectionId": "books"}], "where": where}
            timed = []
            for what, path, body in (
                    ("one filtered query (as the minimal client)", ":runQuery", {"structuredQuery": query}),
                    ("one filtered query with limit 1", ":runQuery", {"structuredQuery": dict(query, limit=1)}),
                    ("count() of the scope", ":runAggregationQuery", {"structuredAggregationQuery": {
                        "structuredQuery": query, "aggregations": [{"alias": "n", "count": {}}]}})):
                client.call("POST", "/v1/%s%s" % (client.root, path), body)  # once unmeasured, as everywhere
                start = time.perf_counter()
                status, _ = client.call("POST", "/v1/%s%s" % (client.root, path), body)
                if status != 200:
                    raise SystemExit("bench: the emulator answered %d to %s" % (status, what))
                timed.append((what, time.perf_counter() - start))
        rows = [Row("emulator alone: the scope's queries (%s)" % label if i == 0 else "", n, what, "")
                for i, (what, _) in enumerate(timed)]
        for row, (_, seconds) in zip(rows, timed):
            row.add(Timed(seconds))
        self.rows += rows

    def scoped(self, n, wanted):
        runs = self.args.runs
        shards = max(SCOPE_VALUE + 1, n // max(1, wanted))
        scope = "%s == %d" % (SCOPE_FIELD, SCOPE_VALUE)
        base = os.path.join(self.work, "scoped-%d" % n)
        os.makedirs(base)
        project = self.project("scope")
        self.log("scoped %d: seeding (shard = i %% %d)" % (n, shards))
        matching = seed_sharded(self.host, project, n, shards)
        m = len(matching)
        label = "%s of N match" % "{:,}".format(m)

        def bs_clone(counted_row=None):
            d = self.fresh(os.path.join(base, "bs"))
            cmd = [self.bin, "clone", "--firestore", project, "--collection", "books", "--where", scope, d]
            if counted_row is not None:
                r = self.counted(counted_row, cmd, env=self.proxied_env())
            else:
                r = run(cmd, env=self.remote_env)
            return d, r

        def ref_pull(host=None):
            return self.refcmd("pull", self.fresh(os.path.join(base, "ref")), project, host=host) + ["--where", scope]

        # The counted pass is also the warm-up and the check: the same M files from both.
        self.log("scoped %d: counted pass (checks booksync's scoped clone against the minimal client's filtered query)" % n)
        b_row = Row("scoped clone, --where '%s' (%s)" % (scope, label), n, "booksync", "")
        m_row = Row("", n, "minimal client (the same filtered query)", "")
        d, _ = bs_clone(b_row)
        expected = tree_digest_deep(d)
        cmd = ref_pull(host=self.proxy.host)
        self.counted(m_row, cmd)
        got = tree_digest_deep(cmd[cmd.index("pull") + 1])
        if expected[1] != m or got != expected:
            raise SystemExit("bench: the scoped clone wrote %d files, the minimal client %d, for %d matching documents%s" % (
                expected[1], got[1], m, "" if expected[1] != m or got[1] != m else " (with different bytes)"))
        synced = None
        for i in range(runs):
            self.log("scoped %d: clone, run %d" % (n, i + 1))
            m_row.add(run(ref_pull()))
            synced, r = bs_clone()
            b_row.add(r)
        ratio = b_row.wall / m_row.wall
        b_row.ratio = fmt_ratio(ratio) + " minimal"
        billed = b_row.counts["billed_reads"]
        # What the scope should cost: a read per matching document, plus a query's
        # minimum read where a page comes back empty and a read per count() (1 per 1,000).
        allowance = 2 + -(-m // 1000)
        b_row.target = "billed reads ≤ matching + %d" % allowance
        kinds = ", ".join("%s %d (%d billed)" % (k, v["requests"], v["billed_reads"]) for k, v in sorted(b_row.counts["by_kind"].items()))
        b_row.result = self.target(
            "billed reads of a scoped clone, %s of %s documents match, ≤ the matching documents + %d" % (
                "{:,}".format(m), "{:,}".format(n), allowance),
            "%s billed (matching %s, collection %s; minimal client %s); requests: %s" % (
                "{:,}".format(billed), "{:,}".format(m), "{:,}".format(n), "{:,}".format(m_row.counts["billed_reads"]), kinds),
            billed <= m + allowance)
        self.rows += [b_row, m_row]

        # status and pull after 10 remote changes inside the scope
        ids = matching[:: max(1, m // CHANGED)][:CHANGED]
        change_remote = self.remote_changer(project, ids)
        status = [self.bin, "-C", synced, "status"]

        def ten(r):
            if "%d remote changes" % CHANGED not in r.stdout:
                raise SystemExit("bench: scoped status with %d remote changes said:\n%s%s" % (CHANGED, r.stdout[-1000:], r.stderr[-1000:]))

        self.log("scoped %d: status with %d remote changes inside the scope" % (n, CHANGED))
        change_remote()
        ten(run(status, env=self.remote_env))
        s_row = Row("status, %d remote changes inside the scope (%s)" % (CHANGED, label), n, "booksync", "")
        ten(self.counted(s_row, status, env=self.proxied_env()))
        for _ in range(runs):
            change_remote()
            r = run(status, env=self.remote_env)
            ten(r)
            s_row.add(r)
        s_row.ratio = fmt_ratio(s_row.wall / m_row.wall) + " minimal full scoped pull"

        self.log("scoped %d: pull of %d remote changes inside the scope" % (n, CHANGED))
        pull = [self.bin, "-C", synced, "pull"]

        def pulled(r):
            if "pulled %d" % CHANGED not in r.stdout:
                raise SystemExit("bench: scoped pull of %d remote changes said:\n%s%s" % (CHANGED, r.stdout[-1000:], r.stderr[-1000:]))

        pulled(run(pull, env=self.remote_env))
        p_row = Row("pull, %d remote changes inside the scope (%s)" % (CHANGED, label), n, "booksync", "")
        change_remote()
        pulled(self.counted(p_row, pull, env=self.proxied_env()))
        for _ in range(runs):
            change_remote()
            r = run(pull, env=self.remote_env)
            pulled(r)
            p_row.add(r)
        p_row.ratio = fmt_ratio(p_row.wall / m_row.wall) + " minimal full scoped pull"
        for row in (s_row, p_row):
            reads = row.counts["billed_reads"]
            row.target = "billed reads ≤ matching + %d" % (CHANGED + allowance)
            row.result = self.target(
                "billed reads of a scoped %s with %d changes, %s of %s documents match, ≤ the matching documents + %d" % (
                    row.scenario.split(",")[0], CHANGED, "{:,}".format(m), "{:,}".format(n), CHANGED + allowance),
                "%s (%s requests: %s)" % ("{:,}".format(reads), row.counts["requests"], ", ".join(
                    "%s %d" % (k, v["requests"]) for k, v in sorted(row.counts["by_kind"].items()))),
                reads <= m + CHANGED + allowance)
        self.rows += [s_row, p_row]
        self.emulator_scope_cost(n, project, scope, label)
        self.notes.append("Scoped collection of %s documents, %s matching `%s`: the clone took %s against %s for the minimal "
                          "client's filtered query (CPU time, user + system: %s against %s); status with %d changes inside "
                          "the scope %s, their pull %s; load average when the scenario ended: %s." % (
                              "{:,}".format(n), "{:,}".format(m), scope, fmt_time(b_row.wall), fmt_time(m_row.wall),
                              fmt_time(b_row.cpu), fmt_time(m_row.cpu), CHANGED, fmt_time(s_row.wall), fmt_time(p_row.wall),
                              load_average()))
        self.wipe(project)
