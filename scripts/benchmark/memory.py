"""The memory scenario of scripts/bench: peak RSS of every command that works on
a collection of N local records (--memory-records; --scale uses 1,000,000), each
run once under /usr/bin/time. The target, ≤ 150 MB at 1,000,000 records, is for
every command, not only status.

The records are published first (`push` of N new records, itself measured), so
the base holds N records and `push` of 10 changes works against a real emulator.
Commands that must list the remote collection (`status`, `pull`, `sync` without a
change-field mark) are measured at 100,000 remote documents by the remote
scenarios instead: the emulator scans the whole collection for every query, so a
names listing of 1,000,000 takes it about a thousand queries' worth of scans."""
import os
import re

from harness.booksync import make_collection

from .common import CHANGED, RACY_WAIT, Row, changed_ids, edit_rating, run

RSS_LIMIT_MB = 150


def published(expect, output):
    """True when `output` says `expect`; "pushed N" also matches "pushed X, recorded Y"
    with X + Y = N: on a busy machine a write whose answer was lost is retried,
    found applied, and recorded (adopted) rather than pushed again."""
    if expect in output:
        return True
    wanted = re.fullmatch(r"pushed (\d+)", expect)
    done = re.search(r"pushed (\d+), recorded (\d+)", output)
    return bool(wanted and done and int(done.group(1)) + int(done.group(2)) == int(wanted.group(1)))


class MemoryScenarios:
    """Mixin of the Bench class (__main__.py)."""

    def memory(self, n):
        directory = os.path.join(self.work, "memory-%d" % n, "books")
        self.log("memory %d: generating records" % n)
        make_collection(directory, n, 1)
        project = self.project("mem")
        self.init(directory, project)
        rows = []

        def measure(title, *args, env=None, expect=None, ok=(0,)):
            self.log("memory %d: %s" % (n, title))
            r = run(self.bs(directory, *args), env=env or self.local_env, rss=True, ok=ok)
            if expect is not None and not published(expect, r.stdout + r.stderr):
                raise SystemExit("bench: %s did not say %r:\n%s%s" % (title, expect, r.stdout[-2000:], r.stderr[-2000:]))
            row = Row(title, n, "booksync", "")
            row.add(r)
            row.set_rss(r)
            rows.append(row)

        measure("push of N new records (memory)", "push", env=self.remote_env, expect="pushed %d" % n)
        # Past the stat cache's racy window, so an unchanged status reads no file.
        run(["sleep", str(RACY_WAIT)])
        measure("status --offline, unchanged (memory)", "status", "--offline", expect="nothing changed")
        measure("validate (memory)", "validate")
        measure("validate --json (memory)", "validate", "--json")
        measure("fmt --check (memory)", "fmt", "--check")
        measure("fmt, nothing to rewrite (memory)", "fmt")
        edit_rating(directory, changed_ids(n), 9.5)
        measure("status --offline, %d changed (memory)" % CHANGED, "status", "--offline", expect="%d local change" % CHANGED)
        measure("diff --offline of the %d changed (memory)" % CHANGED, "diff", "--offline")
        measure("push --dry-run of %d changed (memory)" % CHANGED, "push", "--dry-run", env=self.remote_env)
        measure("push of %d changed records (memory)" % CHANGED, "push", env=self.remote_env,
                expect="pushed %d" % CHANGED)
        self.rows += rows
        peak = max(rows, key=lambda r: r.rss_kb or 0)
        peak_mb = (peak.rss_kb or 0) / 1024
        self.target("peak RSS of every local command and push at %s records ≤ %d MB" % ("{:,}".format(n), RSS_LIMIT_MB),
                    "%.1f MB (%s)" % (peak_mb, peak.scenario.replace(" (memory)", "")), peak_mb <= RSS_LIMIT_MB,
                    applies=(n == 1_000_000))
        self.wipe(project)
