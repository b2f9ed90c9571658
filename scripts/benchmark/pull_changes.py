"""The changed-pull scenario of scripts/bench (--changes-pull N): N documents are
published (by the minimal client, not timed) and pulled into a directory per
binary (the first pull, measured), then every document is changed remotely (one
field, by REST commits, as another app would) before each round, and each
directory pulls the N changes: wall time and peak RSS (`/usr/bin/time -f %M`).

With --before-bin, an earlier booksync does the same in its own directory, in
the same rounds, alternating which pulls first: the reference the time target
(≤ 1.1× before) is measured against in the same run. The first round goes
through the counting proxy (requests, billed reads); the others are timed.
With --changes-pull-field FIELD the directories are initialized with that change
field and every change sets it to the server's time, so the pulls read the
changes through the change query (bodies come with its answers)."""
import os

from harness.booksync import make_collection
from harness.emulator import Client

from .common import Row, fmt_ratio, run

RSS_LIMIT_MB = 150
TIME_LIMIT = 1.1


class PullChangesScenarios:
    """Mixin of the Bench class (__main__.py)."""

    def change_every_document(self, project, ids, value, field=None):
        with Client(self.host, project) as client:
            client.update_fields("books", ids, {"rating": {"doubleValue": value}},
                                 [{"fieldPath": field, "setToServerValue": "REQUEST_TIME"}] if field else None)

    def changes_pull(self, n):
        field = self.args.changes_pull_field
        extra = ["--change-field", field] if field else []
        via = ", change field %s" % field if field else ""
        base = os.path.join(self.work, "changes-%d" % n)
        gen = os.path.join(base, "gen")
        self.log("changed pull %d: generating and publishing" % n)
        make_collection(gen, n, 1)
        project = self.project("chg")
        run(self.refcmd("push", gen, project))
        ids = sorted(name[:-5] for name in os.listdir(gen) if name.endswith(".json"))
        binaries = [("booksync", self.bin)]
        if self.args.before_bin:
            binaries.append(("booksync before (%s)" % (self.args.before_note or os.path.basename(self.args.before_bin)),
                             os.path.abspath(self.args.before_bin)))
        directories, first_rows, rows = {}, {}, {}
        for label, binary in binaries:
            d = self.fresh(os.path.join(base, "pull"))
            os.makedirs(d)
            run([binary, "-q", "-C", d, "init", "--firestore", project, "--collection", "books"] + extra, env=self.local_env)
            self.log("changed pull %d: first pull (%s)" % (n, label))
            r = run([binary, "-C", d, "pull"], env=self.remote_env, rss=True)
            first_rows[label] = Row("first pull (changed-pull scenario%s)" % via, n, label, "")
            first_rows[label].add(r)
            first_rows[label].set_rss(r)
            directories[label] = d
            rows[label] = Row("pull of N remote changes (every document%s)" % via, n, label, "")

        def check(r, label):
            if "pulled %d" % n not in r.stdout or (field and "documents whose '%s'" % field not in r.stdout + r.stderr):
                raise SystemExit("bench: %s's pull of %d changes said:\n%s%s" % (label, n, r.stdout[-1000:], r.stderr[-1000:]))

        for round_ in range(self.args.runs + 1):
            self.log("changed pull %d: changing every document (round %d)" % (n, round_))
            self.change_every_document(project, ids, 6.0 + round_ / 1000, field)
            order = binaries if round_ % 2 == 0 else list(reversed(binaries))
            for label, binary in order:
                cmd = [binary, "-C", directories[label], "-v", "pull"]
                if round_ == 0:
                    # Counted through the proxy, with its peak RSS; not timed.
                    self.log("changed pull %d: %s, counted" % (n, label))
                    check(self.counted(rows[label], cmd, env=self.proxied_env()), label)
                else:
                    self.log("changed pull %d: %s, run %d" % (n, label, round_))
                    r = run(cmd, env=self.remote_env, rss=True)
                    check(r, label)
                    rows[label].add(r)
                    rows[label].rss_kb = max(rows[label].rss_kb or 0, r.rss_kb or 0) or None
        new = rows["booksync"]
        peak_mb = (new.rss_kb or 0) / 1024
        new.target = "≤ %d MB; ≤ %.1f× before" % (RSS_LIMIT_MB, TIME_LIMIT)
        verdicts = [self.target("peak RSS of a pull of %s remote changes%s ≤ %d MB" % ("{:,}".format(n), via, RSS_LIMIT_MB),
                                "%.1f MB (first pull %.1f MB)" % (peak_mb, (first_rows["booksync"].rss_kb or 0) / 1024),
                                peak_mb <= RSS_LIMIT_MB, applies=n >= 100_000)]
        if len(binaries) > 1:
            before = rows[binaries[1][0]]
            ratio = new.wall / before.wall
            new.ratio = fmt_ratio(ratio) + " before"
            verdicts.append(self.target("pull of %s remote changes%s ≤ %.1f× the earlier booksync's time" % ("{:,}".format(n), via, TIME_LIMIT),
                                        "%s vs %s (%s)" % (fmt_time_s(new.wall), fmt_time_s(before.wall), fmt_ratio(ratio)),
                                        ratio <= TIME_LIMIT, applies=n >= 100_000))
        new.result = " / ".join(verdicts)
        for label, _ in binaries:
            self.rows += [first_rows[label], rows[label]]
        self.wipe(project)


def fmt_time_s(seconds):
    return "%.2f s" % seconds
