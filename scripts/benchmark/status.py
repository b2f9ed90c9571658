#!/usr/bin/env python3
"""The scenarios of scripts/bench that are about what finding remote changes costs:
`booksync status` on an unchanged synced collection and with 10 remote changes, the
pull of 10 remote changes, each without and (when the binary has `init
--change-field`) with a change field; and what the emulator alone spends listing a
collection in booksync's batches versus in one query (see __main__.py)."""
import json
import os
import shutil
import time

from harness.emulator import Client

from .common import CHANGED, Row, fmt_time, run

CHANGE_FIELD = "updatedAt"  # the change field of the change-field scenarios
MARK_MARGIN = 60  # seconds: ChangeMark.margin, how long before a pull's read time its mark is put
# booksync's listing with bodies (FirestoreRemote): the first query asks for 300 documents,
# later ones for as many as fit in 8 MiB at the size seen so far, at most 5,000.
LISTING_FIRST, LISTING_MAX, LISTING_BYTES = 300, 5_000, 8 << 20


class Timed:
    """A measured duration in the shape of a harness.process.Result (what Row.add reads)."""

    def __init__(self, seconds):
        self.seconds = seconds


class StatusScenarios:
    """Mixin of the Bench class (__main__.py): status-unchanged, status-10 and pull-10
    for any synced directory, the change-field variants, and the emulator's own
    listing cost."""

    def remote_changer(self, project, ids, change_field=None):
        """A function that changes `rating` of the documents `ids` by one REST commit with
        an update mask, a new value each call, as another app would; with a change
        field it also sets that field to the server's request time, as the
        convention asks of every writer."""
        client = Client(self.host, project)
        rounds = iter(range(1, 100_000))
        transforms = [{"fieldPath": change_field, "setToServerValue": "REQUEST_TIME"}] if change_field else None

        def change_remote():
            client.update_fields("books", ids, {"rating": {"doubleValue": 6.0 + next(rounds) / 1000}}, transforms)
        return change_remote

    def one_request(self, project, ids):
        """The wall time of one :commit of updates to the documents `ids`, sent from this
        process (no interpreter start): what "+ 1 request" means in a target."""
        with Client(self.host, project) as client:
            writes = [{"update": {"name": client.name("books/" + i), "fields": {"rating": {"doubleValue": 4.5}}},
                       "updateMask": {"fieldPaths": ["rating"]}} for i in ids]
            client.commit(writes)  # connects; the next commit is the measured request
            start = time.perf_counter()
            client.commit(writes)
            return Timed(time.perf_counter() - start)

    def status_scenarios(self, n, synced, change_remote, client, change_field=False):
        """status-unchanged and status-10 on `synced`, a directory in sync with its
        collection; leaves the 10 remote changes unpulled."""
        runs = self.args.runs
        size = "{:,}".format(n)
        status = self.bs(synced, "status")
        self.log("remote %d: status, unchanged (%s)" % (n, client))

        def unchanged(r):
            if "nothing changed" not in r.stdout:
                raise SystemExit("bench: status of an unchanged collection said:\n%s%s" % (r.stdout[-1000:], r.stderr[-1000:]))

        unchanged(run(status, env=self.remote_env))
        u_row = Row("status, collection unchanged", n, client, "")
        unchanged(self.counted(u_row, status, env=self.proxied_env()))
        for _ in range(runs):
            r = run(status, env=self.remote_env)
            unchanged(r)
            u_row.add(r)
        reads = u_row.counts.get("billed_reads", 0)
        if change_field:
            u_row.target = "≤ 102 billed reads"
            u_row.result = self.target("billed reads of status on an unchanged %s-document collection with a change field "
                                       "≤ 102" % size, "{:,}".format(reads), reads <= 102, applies=(n == 100_000))
        else:
            self.notes.append("status of an unchanged %s-document collection without a change field: %s billed reads "
                              "(the names-only listing)." % (size, "{:,}".format(reads)))
        self.log("remote %d: status, %d remote changes (%s)" % (n, CHANGED, client))

        def ten(r):
            if "%d remote changes" % CHANGED not in r.stdout:
                raise SystemExit("bench: status with %d remote changes said:\n%s%s" % (CHANGED, r.stdout[-1000:], r.stderr[-1000:]))

        change_remote()
        ten(run(status, env=self.remote_env))
        c_row = Row("status, %d of N remote documents changed" % CHANGED, n, client, "")
        ten(self.counted(c_row, status, env=self.proxied_env()))
        for _ in range(runs):
            change_remote()
            r = run(status, env=self.remote_env)
            ten(r)
            c_row.add(r)
        self.rows += [u_row, c_row]

    def pull_changes(self, n, synced, change_remote, client, change_field=False):
        """pull-10: a pull after 10 of N remote documents changed, before every run;
        returns the row (counts from its pass through the proxy) for the caller's targets."""
        def check_pulled(r):
            if "pulled %d" % CHANGED not in r.stdout:
                raise SystemExit("bench: pull of %d remote changes said:\n%s%s" % (CHANGED, r.stdout[-1000:], r.stderr[-1000:]))

        change_remote()
        check_pulled(run(self.bs(synced, "pull"), env=self.remote_env))
        b_row = Row("pull, %d of N remote documents changed" % CHANGED, n, client, "")
        change_remote()
        check_pulled(self.counted(b_row, self.bs(synced, "pull"), env=self.proxied_env()))
        for _ in range(self.args.runs):
            change_remote()
            r = run(self.bs(synced, "pull"), env=self.remote_env)
            check_pulled(r)
            b_row.add(r)
        if change_field:
            reads = b_row.counts.get("billed_reads", 0)
            b_row.target = "≤ 112 billed reads"
            b_row.result = self.target("billed reads of pull with %d changes in %s documents with a change field ≤ 112" % (
                CHANGED, "{:,}".format(n)), "{:,}".format(reads), reads <= 112, applies=(n == 100_000))
        return b_row

    def change_field_scenarios(self, n, gen, ids):
        """status-unchanged, status-10 and pull-10 again on a collection whose every
        document carries a change field: published by `booksync push` from a directory
        initialized with `--change-field`, pulled into another such directory (neither
        timed), changed by commits that set the field to the server's time."""
        base = os.path.join(self.work, "remote-%d" % n)
        project = self.project("cfield")
        push_dir = self.fresh(os.path.join(base, "cf-push"))
        shutil.copytree(gen, push_dir)
        self.log("remote %d: publishing with a change field" % n)
        self.init(push_dir, project, change_field=CHANGE_FIELD)
        run(self.bs(push_dir, "push"), env=self.remote_env)
        # A pull's change mark is its read time minus a minute (ChangeMark.margin: a write
        # processed before a read may commit after it), so documents written in the minute
        # before a pull are read again until a later pull. Measure the steady state: the
        # collection was last written more than a minute before the pull that synced it.
        self.log("remote %d: waiting %d s so the pull's change mark is past the publishing writes" % (n, MARK_MARGIN + 2))
        time.sleep(MARK_MARGIN + 2)
        synced = self.fresh(os.path.join(base, "cf-pull"))
        self.init(synced, project, change_field=CHANGE_FIELD)
        run(self.bs(synced, "pull"), env=self.remote_env)
        client = "booksync, change field %s" % CHANGE_FIELD
        change_remote = self.remote_changer(project, ids, change_field=CHANGE_FIELD)
        self.status_scenarios(n, synced, change_remote, client, change_field=True)
        self.log("remote %d: pull of %d remote changes (%s)" % (n, CHANGED, client))
        self.rows.append(self.pull_changes(n, synced, change_remote, client, change_field=True))
        self.wipe(project)

    def emulator_listing(self, n, project):
        """What the emulator alone spends listing n documents with bodies: in :runQuery
        batches continued after the last name, sized as booksync sizes them, and in one
        :runQuery (the minimal client's). The emulator scans the whole collection for
        every query, however small its limit or deep its cursor, so paging costs it
        time proportional to N per page: N²/batch in all, where a real Firestore serves
        each page from its index."""
        client = Client(self.host, project, timeout=1200)

        def query(after, limit):
            q = {"from": [{"collectionId": "books"}], "orderBy": [{"field": {"fieldPath": "__name__"}, "direction": "ASCENDING"}]}
            if limit:
                q["limit"] = limit
            if after:
                q["startAt"] = {"values": [{"referenceValue": after}], "before": False}
            _, payload = client.call("POST", "/v1/%s:runQuery" % client.root, {"structuredQuery": q})
            names = [e["document"]["name"] for e in json.loads(payload) if "document" in e]
            return names, len(payload)

        self.log("remote %d: the emulator's own listing cost" % n)
        start = time.perf_counter()
        after, pages, seen, batch = None, 0, 0, LISTING_FIRST
        while True:
            names, size = query(after, batch)
            pages += 1
            seen += len(names)
            if len(names) < batch:
                break
            after = names[-1]
            batch = min(LISTING_MAX, max(1, LISTING_BYTES // max(1, size // len(names))))
        paged = time.perf_counter() - start
        start = time.perf_counter()
        one = len(query(None, None)[0])
        single = time.perf_counter() - start
        start = time.perf_counter()
        query(None, 1)
        tiny = time.perf_counter() - start
        client.close()
        p_row = Row("emulator alone: listing N documents with bodies", n, "%d queries (as booksync pages)" % pages, "")
        p_row.add(Timed(paged))
        o_row = Row("", n, "one query (as the minimal client)", "")
        o_row.add(Timed(single))
        t_row = Row("", n, "one query with limit 1", "")
        t_row.add(Timed(tiny))
        self.rows += [p_row, o_row, t_row]
        self.notes.append("The emulator's cost per query grows with the collection: a :runQuery with limit 1 on %s "
                          "documents takes %s; paging through them in %d queries as booksync does takes %s, one "
                          "query %s (%d and %d documents seen)." % (
                              "{:,}".format(n), fmt_time(tiny), pages, fmt_time(paged), fmt_time(single), seen, one))
