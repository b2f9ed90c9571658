#!/usr/bin/env python3
"""The local scenarios of scripts/bench: `booksync status --offline` on N records
against `git status --porcelain` and `sha256sum` on the same tree (see __main__.py)."""
import os
import re
import signal
import subprocess
import time

import harness.process
from harness.booksync import Booksync, make_collection

from .common import (GIT_ENV, RACY_WAIT, Row, changed_ids, edit_rating, fmt_ratio, fmt_time, peak_rss_kb,
                     run, touch_all, write_manifest)


class LocalScenarios:
    """Mixin of the Bench class (__main__.py): status-warm, status-touched, status-first."""

    def local(self, n):
        directory = os.path.join(self.work, "local-%d" % n, "books")
        self.log("local %d: generating records" % n)
        make_collection(directory, n, 1)
        self.init(directory, "bench-local")
        write_manifest(directory)
        git = ["git", "-C", directory]
        genv = dict(self.local_env, **GIT_ENV)
        run(git + ["init", "-q"], env=genv)
        run(git + ["add", "-A"], env=genv)
        run(git + ["commit", "-q", "-m", "records"], env=genv)
        status = self.bs(directory, "status", "--offline")
        git_status = git + ["status", "--porcelain"]

        def nothing(_r):
            if "nothing changed" not in _r.stdout:
                raise SystemExit("bench: booksync status reported changes:\n" + _r.stdout[:2000] + _r.stderr[:2000])

        def git_clean(_r):
            if _r.stdout.strip():
                raise SystemExit("bench: git status is not clean:\n" + _r.stdout[:2000])

        def no_prep():
            pass

        def touch():
            touch_all(directory)

        index = os.path.join(directory, ".booksync", "index")

        def drop_index():
            os.remove(index)

        # status-warm: fill booksync's stat cache, let the files age past its racy window
        self.log("local %d: status, unchanged tree" % n)
        nothing(run(status, env=self.local_env))
        time.sleep(RACY_WAIT)
        verbose = run([self.bin, "-v", "-C", directory, "status", "--offline"], env=self.local_env)
        read = re.search(r"read (\d+)", verbose.stderr)
        self.notes.append("status on %s unchanged records, warm cache: booksync -v says %s." % (
            "{:,}".format(n), "'read %s'" % read.group(1) if read else "nothing about reads"))
        rss = [self.local_pair(n, "status --offline, unchanged, warm cache", status, no_prep, nothing,
                               "git status --porcelain", git_status, genv, no_prep, git_clean,
                               "git", 1.0, "status --offline, unchanged tree")]
        # status-touched: touch before every run of either tool
        self.log("local %d: status after touching every file" % n)
        rss.append(self.local_pair(n, "status --offline after touch of every file", status, touch, nothing,
                                   "git status --porcelain", git_status, genv, touch, git_clean,
                                   "git", 1.0, "status --offline after touch"))
        # status-first: no stat cache
        self.log("local %d: first status without a stat cache" % n)
        sha = ["bash", "-c", 'cd "$1" && find . -maxdepth 1 -name "*.json" -print0 | xargs -0 sha256sum >/dev/null',
               "sha256sum", directory]
        rss.append(self.local_pair(n, "first status --offline, no stat cache", status, drop_index, nothing,
                                   "sha256sum (xargs) of all files", sha, self.local_env, no_prep, lambda _r: None,
                                   "sha256sum", 1.5, "first status, no stat cache"))
        peak = max(rss) / 1024
        self.target("peak RSS of status on %s records ≤ 150 MB" % "{:,}".format(n), "%.1f MB" % peak, peak <= 150,
                    applies=(n == 100_000))
        if self.supports_watch_for_status():
            self.watched(n, directory, status, nothing, git_status, genv, git_clean)

    def supports_watch_for_status(self):
        return Booksync(self.bin, env=self.local_env).offers("watch", "--no-sync")

    def watched(self, n, directory, status, nothing, git_status, genv, git_clean):
        """status-watched: `status --offline` while `booksync watch --no-sync` runs (it asks the
        watcher what changed), unchanged and with 10 records edited, against git status; and the
        watcher's peak RSS."""
        env = dict(self.local_env, BOOKSYNC_WATCH_DIR=os.path.join(self.work, "watchers-%d" % n))
        log = open(os.path.join(self.work, "watch-%d.log" % n), "w")
        watch = subprocess.Popen([self.bin, "-C", directory, "watch", "--no-sync", "--json"], env=env, stdout=log,
                                 stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 60
            while '"start"' not in open(log.name).read():
                if time.time() > deadline or watch.poll() is not None:
                    raise SystemExit("bench: watch --no-sync did not start: " + open(log.name).read()[:2000])
                time.sleep(0.1)
            # The first status scans everything and leaves its findings for the next.
            self.log("local %d: status with the watcher running" % n)
            nothing(run(status, env=env))
            time.sleep(RACY_WAIT)
            verbose = run([self.bin, "-v", "-C", directory, "status", "--offline"], env=env)
            if "the watcher vouched" not in verbose.stderr:
                raise SystemExit("bench: status did not use the watcher: " + verbose.stderr[:2000])
            self.local_pair(n, "status --offline, unchanged, watcher running", status, lambda: None, nothing,
                            "git status --porcelain", git_status, genv, lambda: None, git_clean,
                            "git", 0.05, "status --offline with the watcher, unchanged", env=env, absolute=0.050)
            edit_rating(directory, changed_ids(n), 4.25)

            def ten(_r):
                if "10 local changes" not in _r.stdout:
                    raise SystemExit("bench: booksync status did not report the 10 edits:\n" + _r.stdout[-2000:] + _r.stderr[-2000:])

            def git_ten(_r):
                if len(_r.stdout.strip().splitlines()) != 10:
                    raise SystemExit("bench: git status did not report the 10 edits:\n" + _r.stdout[:2000])
            self.log("local %d: status with the watcher running, 10 records edited" % n)
            self.local_pair(n, "status --offline, 10 edited, watcher running", status, lambda: None, ten,
                            "git status --porcelain", git_status, genv, lambda: None, git_ten,
                            "git", 0.05, "status --offline with the watcher, 10 edited", env=env, absolute=0.050)
            peak = (peak_rss_kb(watch.pid) or 0) / 1024
            self.target("peak RSS of watch --no-sync on %s records ≤ 150 MB" % "{:,}".format(n), "%.1f MB" % peak, peak <= 150,
                        applies=(n >= 100_000))
        finally:
            harness.process.stop(watch, 30, signal.SIGINT)
            log.close()

    def local_pair(self, n, title, bs_cmd, bs_prep, bs_check, ref_label, ref_cmd, ref_env, ref_prep, ref_check,
                   ref_short, limit, what, env=None, absolute=None):
        """Warm-up, alternating measured runs and one RSS pass of booksync and a local reference.

        Each prep function runs before every run of its command (not timed). booksync runs in env
        (default: the local environment). The target is met at `limit` times the reference, or
        (with `absolute`) within that many seconds. Returns booksync's peak RSS in KiB."""
        env = env or self.local_env
        b_row = Row(title, n, "booksync", "")
        r_row = Row("", n, ref_label, "")
        ref_prep()
        ref_check(run(ref_cmd, env=ref_env))
        bs_prep()
        bs_check(run(bs_cmd, env=env))
        for _ in range(self.args.local_runs):
            ref_prep()
            r = run(ref_cmd, env=ref_env)
            ref_check(r)
            r_row.add(r)
            bs_prep()
            r = run(bs_cmd, env=env)
            bs_check(r)
            b_row.add(r)
        ref_prep()
        r_row.set_rss(run(ref_cmd, env=ref_env, rss=True))
        bs_prep()
        b_row.set_rss(run(bs_cmd, env=env, rss=True))
        ratio = b_row.wall / r_row.wall
        b_row.ratio = fmt_ratio(ratio) + " " + ref_short
        bound = ("≤ %.1f× %s" if limit >= 0.1 else "≤ %.2f× %s") % (limit, ref_short) + (" or ≤ %d ms" % round(absolute * 1000) if absolute else "")
        b_row.target = bound
        b_row.result = self.target("%s, %s records %s" % (what, "{:,}".format(n), bound),
                                   "%s vs %s (%s)" % (fmt_time(b_row.wall), fmt_time(r_row.wall), fmt_ratio(ratio)),
                                   ratio <= limit or (absolute is not None and b_row.wall <= absolute))
        self.rows += [b_row, r_row]
        return b_row.rss_kb or 0
