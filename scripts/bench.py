#!/usr/bin/env python3
"""Benchmarks booksync against reference tools measured in the same run on the same data.

One long file on purpose for now: the Bench class is the list of scenarios, each a
few lines of set-up, timing and a table row, and they share its state (sizes, runs,
the emulator host). Issue 13 (billed reads, --scale) reworks the scenarios; split it
there by local and remote scenarios rather than twice.

Normally started through scripts/bench, which builds booksync (release), starts the
Firestore emulator and stops it afterwards. Every scenario runs once as a warm-up
(not reported), then --runs times; the table shows medians. booksync and its
reference alternate run by run, so drift on the machine hits both alike.

Local scenarios (per --local-sizes), against `git status --porcelain` on the same
tree committed to a git repository, and `sha256sum` (through xargs) of all files:
  status-warm     `booksync status --offline`, unchanged tree, warm stat cache
  status-touched  the same right after `touch` of every record file (not timed)
  status-first    first status with no stat cache (.booksync/index deleted)

Remote scenarios (per --remote-sizes), against the Firestore emulator and the two
clients of scripts/bench_reference.py (minimal: fewest requests; naive: one request
per document):
  pull-all        first pull of N documents into an empty directory
  push-all        push of N new records into an empty collection
  push-10         push of 10 changed records in an N-record collection
  pull-10         pull when 10 of N remote documents changed

Wall times come from runs without a proxy (spawn to os.wait4). Requests and bytes
come from one separate pass of each remote command through scripts/count_proxy.py
(FIRESTORE_EMULATOR_HOST pointed at it). Peak RSS comes from `/usr/bin/time -f %M`
in that pass (remote) or in one extra run (local): os.wait4's own ru_maxrss cannot
be used, as Linux charges the child the RSS of this Python process it was forked from.

Results go to stdout and to BENCHMARKS.md (--output), which also gets the machine
description. The section between `<!-- analysis -->` and `<!-- /analysis -->` of an
existing BENCHMARKS.md is kept, so hand-written analysis survives a re-run.

Nothing is deleted while measuring (ext4 allocates inodes slowly for a while after
mass deletion, which would skew whichever client runs next); directories of finished
runs are left in the work directory, which scripts/bench removes at the end.
"""
import argparse
import hashlib
import http.client
import json
import os
import platform
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repository
import bench_reference as ref  # noqa: E402  (same directory: value conversion and canonical form)

PY = sys.executable
MAKE_COLLECTION = os.path.join(HERE, "make-collection.py")
REFERENCE = os.path.join(HERE, "bench_reference.py")
PROXY = os.path.join(HERE, "count_proxy.py")
COMMAND_TIMEOUT = 1200.0  # seconds: any single command is killed after this
RACY_WAIT = 0.3  # seconds: older than booksync's 100 ms racy-clean window
REVISION = "2024-01-01T00:00:00.000000Z"
CHANGED = 10  # records changed in the incremental scenarios
TIME = "/usr/bin/time"
EMULATOR_PAGE = 150  # the emulator's page size cap (documented, checked against the counts)
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


# --- running and measuring commands ----------------------------------------------------------

class Run:
    """One finished command: wall seconds, peak RSS in KiB, exit code, output."""

    def __init__(self, wall, rss_kb, rc, out, err):
        self.wall, self.rss_kb, self.rc, self.out, self.err = wall, rss_kb, rc, out, err


def run(cmd, cwd=None, env=None, timeout=COMMAND_TIMEOUT, ok=(0,), rss=False):
    """Runs cmd, timing it from spawn to reap.

    With rss=True the command runs under `/usr/bin/time -f %M`, whose answer becomes
    Run.rss_kb. os.wait4's ru_maxrss of our own child is not usable for that: Linux
    counts the pre-exec image, so it never reports less than this Python process's RSS.
    """
    rss_file = None
    if rss and os.access(TIME, os.X_OK):
        rss_file = tempfile.NamedTemporaryFile(prefix="bench-rss-", delete=False)
        rss_file.close()
        cmd = [TIME, "-f", "%M", "-o", rss_file.name] + list(cmd)
    holder = {}
    timer = threading.Timer(timeout, lambda: holder["p"].kill() if "p" in holder else None)
    timer.daemon = True
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        timer.start()
        try:
            start = time.perf_counter()
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            holder["p"] = p
            _, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - start
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = Run(wall, usage.ru_maxrss, p.returncode, out.read().decode(errors="replace"),
                     err.read().decode(errors="replace"))
    if rss_file is not None:
        with open(rss_file.name) as f:
            lines = f.read().split()
        os.unlink(rss_file.name)
        result.rss_kb = int(lines[-1]) if lines and lines[-1].isdigit() else None
    if ok is not None and result.rc not in ok:
        raise SystemExit("bench: command failed (exit %d): %s\n%s%s" % (
            result.rc, " ".join(cmd), result.out[-2000:], result.err[-2000:]))
    return result


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def creation_cost(directory, count=1000):
    """Microseconds per new 500-byte file in a fresh directory: context for the pull/push rows.

    On ext4 without a journal, creating files right after some process deleted many is
    10-50x slower than usual (the inode allocator skips recently deleted inodes one by one)."""
    os.makedirs(directory)
    start = time.perf_counter()
    for i in range(count):
        with open(os.path.join(directory, "f%d.json" % i), "wb") as f:
            f.write(b"x" * 500)
    return (time.perf_counter() - start) / count * 1e6


def median(values):
    return statistics.median(values) if values else None


# --- the emulator and the counting proxy -----------------------------------------------------

def emulator_request(host, method, path, body=None):
    """One request to the emulator (or proxy) on loopback; returns (status, bytes)."""
    hostname, port = host.rsplit(":", 1)
    conn = http.client.HTTPConnection(hostname, int(port), timeout=120)
    try:
        headers = {"Authorization": "Bearer owner"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


class Proxy:
    """scripts/count_proxy.py as a child process, read and reset over HTTP."""

    def __init__(self, upstream, latency_ms=0):
        self.process = subprocess.Popen([PY, PROXY, "--upstream", upstream, "--latency-ms", str(latency_ms)],
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline().strip() if ready else ""
        if not line.startswith("COUNT_PROXY_HOST="):
            self.stop()
            raise SystemExit("bench: count_proxy.py did not start")
        self.host = line.split("=", 1)[1]

    def reset(self):
        emulator_request(self.host, "POST", "/__reset")

    def counts(self):
        status, payload = emulator_request(self.host, "GET", "/__counts")
        return json.loads(payload)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


# --- data ------------------------------------------------------------------------------------

def record_files(directory):
    return sorted(n for n in os.listdir(directory) if n.endswith(".json") and not n.startswith("."))


def write_manifest(directory):
    """Writes .booksync/manifest.json for a synced state, as a sync would: every file's
    sha256 as its content hash, and the config fingerprint."""
    lines = []
    for name in record_files(directory):
        with open(os.path.join(directory, name), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        lines.append((name[:-5].encode(), '    "%s": {"hash": "sha256:%s", "revision": "%s"}' % (name[:-5], digest, REVISION)))
    lines.sort()
    # As a sync writes it: with the hash of the config.json the records were validated under.
    with open(os.path.join(directory, ".booksync", "config.json"), "rb") as f:
        config = "sha256:" + hashlib.sha256(f.read()).hexdigest()
    text = ('{\n  "version": 1,\n  "config": "%s",\n  "records": {\n' % config
            + ",\n".join(line for _, line in lines) + "\n  }\n}\n")
    with open(os.path.join(directory, ".booksync", "manifest.json"), "w") as f:
        f.write(text)


def tree_digest(directory):
    """sha256 over the names and bytes of every record file: equal digests = identical record files."""
    h = hashlib.sha256()
    for name in record_files(directory):
        h.update(name.encode() + b"\0")
        with open(os.path.join(directory, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def touch_all(directory):
    for name in record_files(directory):
        os.utime(os.path.join(directory, name), None)


def changed_ids(n):
    return ["book-%06d" % (k * n // CHANGED) for k in range(CHANGED)]


def edit_rating(directory, ids, value):
    """Sets "rating" of the given record files to value, keeping the canonical form."""
    text_value = ref.canonical_double(value)
    for doc_id in ids:
        path = os.path.join(directory, doc_id + ".json")
        with open(path) as f:
            text = f.read()
        new, count = re.subn(r'^  "rating": [^,\n]+,$', '  "rating": %s,' % text_value, text, flags=re.M)
        if count != 1:
            raise SystemExit("bench: no rating line in %s" % path)
        with open(path, "w") as f:
            f.write(new)


# --- formatting ------------------------------------------------------------------------------

def fmt_time(seconds):
    if seconds is None:
        return "–"
    if seconds < 1:
        return "%.1f ms" % (seconds * 1000) if seconds < 0.1 else "%.0f ms" % (seconds * 1000)
    return "%.2f s" % seconds


def fmt_bytes(n):
    if n is None:
        return "–"
    if n < 10_000:
        return "%d B" % n
    if n < 10_000_000:
        return "%.1f kB" % (n / 1000)
    return "%.1f MB" % (n / 1e6)


def fmt_ratio(x):
    return "–" if x is None else ("%.2f×" % x)


class Row:
    """One line of the results table."""

    def __init__(self, scenario, size, client, runs, note=""):
        self.scenario, self.size, self.client = scenario, size, client
        self.walls = []
        self.rss_kb = None
        self.runs_note = runs
        self.counts = None
        self.ratio = ""
        self.target = ""
        self.result = ""
        self.note = note

    def add(self, r):
        self.walls.append(r.wall)

    def set_rss(self, r):
        self.rss_kb = r.rss_kb

    @property
    def wall(self):
        return median(self.walls)

    def cells(self):
        c = self.counts
        spread = "%s–%s" % (fmt_time(min(self.walls)), fmt_time(max(self.walls))) if len(self.walls) > 1 else ""
        return [self.scenario, "{:,}".format(self.size), self.client, str(len(self.walls)) + self.runs_note,
                fmt_time(self.wall), spread,
                "–" if c is None else str(c["requests"]),
                "–" if c is None else "{:,}".format(c.get("billed_reads", 0)),
                "–" if c is None else fmt_bytes(c["bytes_sent"]),
                "–" if c is None else fmt_bytes(c["bytes_received"]),
                "%.1f MB" % (self.rss_kb / 1024) if self.rss_kb else "–",
                self.ratio, self.target, self.result]


HEADER = ["scenario", "N", "client", "runs", "wall (median)", "min–max", "requests", "billed reads", "sent", "received",
          "peak RSS", "ratio", "target", "result"]


def markdown_table(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(row.cells()) + " |")
    return "\n".join(lines)


# --- the benchmark ---------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.host = args.emulator_host
        self.work = os.path.abspath(args.workdir)
        self.rows = []
        self.targets = []  # (description, measured, MET/NOT MET, counts toward summary)
        self.notes = []
        self.runid = "b%x" % (int(time.time()) % 0xFFFFFF)
        self.counter = 0
        self.proxy = None
        self.started = time.time()
        self.load_before = load_average()
        self.creation_before = self.creation_after = None
        base = dict(os.environ)
        for key in ("FIRESTORE_EMULATOR_HOST", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            base.pop(key, None)
        base.update({"NO_COLOR": "1", "LC_ALL": "C"})
        self.local_env = base
        self.remote_env = dict(base, FIRESTORE_EMULATOR_HOST=self.host)

    def log(self, message):
        print("bench: [%5.0f s] %s" % (time.time() - self.started, message), file=sys.stderr, flush=True)

    def fresh(self, name):
        """A new, unused path in the work directory (never reused, never deleted during the run)."""
        self.counter += 1
        return os.path.join(self.work, "%s-%d" % (name, self.counter))

    def project(self, label):
        self.counter += 1
        return ("%s-%s%d" % (self.runid, label, self.counter))[:30]

    def wipe(self, project):
        status, body = emulator_request(self.host, "DELETE",
                                        "/emulator/v1/projects/%s/databases/(default)/documents" % project)
        if status != 200:
            self.log("wiping %s answered %d" % (project, status))

    # booksync and reference command lines
    def bs(self, directory, *args):
        return [self.bin, "-C", directory] + list(args)

    def refcmd(self, command, directory, project, host=None, naive=False, update=False, files=()):
        cmd = [PY, REFERENCE, command, directory, "--host", host or self.host, "--project", project]
        if naive:
            cmd.append("--naive")
        if update:
            cmd.append("--update")
        return cmd + list(files)

    def init(self, directory, project):
        os.makedirs(directory, exist_ok=True)
        run(self.bs(directory, "-q", "init", "--firestore", project, "--collection", "books"), env=self.local_env)

    def counted(self, row, cmd, env=None):
        """Runs cmd once through the counting proxy, under /usr/bin/time; fills row's counts and RSS."""
        self.proxy.reset()
        r = run(cmd, env=env, rss=True)
        row.counts = self.proxy.counts()
        row.set_rss(r)
        return r

    def proxied_env(self):
        return dict(self.remote_env, FIRESTORE_EMULATOR_HOST=self.proxy.host)

    def target(self, description, measured, met, applies=True):
        verdict = "MET" if met else "NOT MET"
        self.targets.append((description, measured, verdict if applies else "(%s)" % verdict, applies))
        return verdict if applies else "(%s)" % verdict

    # ---- local ----
    def local(self, n):
        directory = os.path.join(self.work, "local-%d" % n, "books")
        self.log("local %d: generating records" % n)
        run([PY, MAKE_COLLECTION, directory, str(n), "1"])
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
            if "nothing changed" not in _r.out:
                raise SystemExit("bench: booksync status reported changes:\n" + _r.out[:2000] + _r.err[:2000])

        def git_clean(_r):
            if _r.out.strip():
                raise SystemExit("bench: git status is not clean:\n" + _r.out[:2000])

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
        read = re.search(r"read (\d+)", verbose.err)
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

    def local_pair(self, n, title, bs_cmd, bs_prep, bs_check, ref_label, ref_cmd, ref_env, ref_prep, ref_check,
                   ref_short, limit, what):
        """Warm-up, alternating measured runs and one RSS pass of booksync and a local reference.

        Each prep function runs before every run of its command (not timed). Returns booksync's peak RSS in KiB."""
        b_row = Row(title, n, "booksync", "")
        r_row = Row("", n, ref_label, "")
        ref_prep()
        ref_check(run(ref_cmd, env=ref_env))
        bs_prep()
        bs_check(run(bs_cmd, env=self.local_env))
        for _ in range(self.args.local_runs):
            ref_prep()
            r = run(ref_cmd, env=ref_env)
            ref_check(r)
            r_row.add(r)
            bs_prep()
            r = run(bs_cmd, env=self.local_env)
            bs_check(r)
            b_row.add(r)
        ref_prep()
        r_row.set_rss(run(ref_cmd, env=ref_env, rss=True))
        bs_prep()
        b_row.set_rss(run(bs_cmd, env=self.local_env, rss=True))
        ratio = b_row.wall / r_row.wall
        b_row.ratio = fmt_ratio(ratio) + " " + ref_short
        b_row.target = "≤ %.1f× %s" % (limit, ref_short)
        b_row.result = self.target("%s, %s records ≤ %.1f× %s" % (what, "{:,}".format(n), limit, ref_short),
                                   "%s vs %s (%s)" % (fmt_time(b_row.wall), fmt_time(r_row.wall), fmt_ratio(ratio)),
                                   ratio <= limit)
        self.rows += [b_row, r_row]
        return b_row.rss_kb or 0

    # ---- remote ----
    def remote(self, n):
        runs = self.args.runs
        naive_runs = self.args.naive_runs
        size = "{:,}".format(n)
        base = os.path.join(self.work, "remote-%d" % n)
        gen = os.path.join(base, "gen")
        self.log("remote %d: generating records" % n)
        run([PY, MAKE_COLLECTION, gen, str(n), "2"])
        expected = tree_digest(gen)
        pull_project = self.project("pull")
        run(self.refcmd("push", gen, pull_project))
        applies = n == 10_000  # the issue states these targets for 10,000 documents

        # pull-all: first pull into an empty directory
        self.log("remote %d: first pull" % n)

        def bs_pull_dir():
            d = self.fresh(os.path.join(base, "bs-pull"))
            self.init(d, pull_project)
            return d

        d = bs_pull_dir()
        run(self.bs(d, "pull"), env=self.remote_env)
        if tree_digest(d) != expected:
            raise SystemExit("bench: booksync pull did not reproduce the generated records in " + d)
        d = self.fresh(os.path.join(base, "ref-pull"))
        run(self.refcmd("pull", d, pull_project))
        if tree_digest(d) != expected:
            raise SystemExit("bench: the reference pull did not reproduce the generated records in " + d)
        b_row = Row("first pull into an empty directory", n, "booksync", "")
        m_row = Row("", n, "minimal client", "")
        v_row = Row("", n, "naive client", " (no warm-up)")
        self.counted(b_row, self.bs(bs_pull_dir(), "pull"), env=self.proxied_env())
        self.counted(m_row, self.refcmd("pull", self.fresh(os.path.join(base, "ref-pull")), pull_project,
                                                   host=self.proxy.host))
        if naive_runs:
            self.counted(v_row, self.refcmd("pull", self.fresh(os.path.join(base, "naive-pull")),
                                                       pull_project, host=self.proxy.host, naive=True))
        synced = None
        for _ in range(runs):
            m_row.add(run(self.refcmd("pull", self.fresh(os.path.join(base, "ref-pull")), pull_project)))
            synced = bs_pull_dir()
            b_row.add(run(self.bs(synced, "pull"), env=self.remote_env))
        for _ in range(naive_runs):
            v_row.add(run(self.refcmd("pull", self.fresh(os.path.join(base, "naive-pull")), pull_project, naive=True)))
        self.judge_bulk(b_row, m_row, v_row, "first pull of %s documents" % size, applies)
        self.rows += [b_row, m_row] + ([v_row] if naive_runs else [])
        ref_pull_row = m_row

        # pull-10: 10 of N remote documents changed
        self.log("remote %d: pull of %d remote changes" % (n, CHANGED))
        ids = changed_ids(n)
        client = ref.Client(self.host, pull_project)
        rounds = iter(range(1, 1000))

        def change_remote():
            value = 6.0 + next(rounds) / 100
            client.commit([{"update": {"name": "%s/books/%s" % (client.root, i), "fields": {"rating": {"doubleValue": value}}},
                            "updateMask": {"fieldPaths": ["rating"]}, "currentDocument": {"exists": True}} for i in ids])

        def check_pulled(r):
            if "pulled %d" % CHANGED not in r.out:
                raise SystemExit("bench: pull of %d remote changes said:\n%s%s" % (CHANGED, r.out[-1000:], r.err[-1000:]))

        change_remote()
        check_pulled(run(self.bs(synced, "pull"), env=self.remote_env))
        b_row = Row("pull, %d of N remote documents changed" % CHANGED, n, "booksync", "")
        change_remote()
        r = self.counted(b_row, self.bs(synced, "pull"), env=self.proxied_env())
        check_pulled(r)
        for _ in range(runs):
            change_remote()
            r = run(self.bs(synced, "pull"), env=self.remote_env)
            check_pulled(r)
            b_row.add(r)
        ratio = b_row.wall / ref_pull_row.wall
        b_row.ratio = fmt_ratio(ratio) + " minimal full pull"
        kinds = b_row.counts["by_kind"]
        lists = [e for e in b_row.counts["log"] if e["kind"] in ("list", "runQuery")]
        bodies = b_row.counts["requests"] - len(lists)
        masked = all(e["names_only"] for e in lists)
        list_bytes = sum(e["received"] for e in lists) / n
        full_bytes = ref_pull_row.counts["bytes_received"] / n
        ref_pages = ref_pull_row.counts["requests"]
        ok = bodies <= 1 and masked and list_bytes < full_bytes / 2
        b_row.target = "list pages + ≤ 1 body request; masked listing"
        b_row.result = self.target(
            "pull of %d changes in %s: listing pages + ≤ 1 body request, listing without bodies" % (CHANGED, size),
            "%d list requests (minimal client: %d), %d other; by kind: %s; names only in every list request: %s; "
            "listing received %.0f B/document vs %.0f B/document with bodies" % (
                len(lists), ref_pages, bodies, ", ".join("%s %d" % (k, v["requests"]) for k, v in sorted(kinds.items())),
                "yes" if masked else "NO", list_bytes, full_bytes), ok)
        self.rows.append(b_row)

        # push-all: N new records into an empty collection
        self.log("remote %d: push of %d new records" % (n, n))
        push_dir = os.path.join(base, "push")
        shutil.copytree(gen, push_dir)
        trash = os.path.join(base, "trash")
        os.makedirs(trash)

        def bs_push():
            if os.path.exists(os.path.join(push_dir, ".booksync")):
                os.rename(os.path.join(push_dir, ".booksync"), self.fresh(os.path.join(trash, "booksync")))
            project = self.project("bpush")
            self.init(push_dir, project)
            return project

        def check_pushed(r, count):
            if "pushed %d" % count not in r.out:
                raise SystemExit("bench: booksync push said:\n%s%s" % (r.out[-1000:], r.err[-1000:]))

        p = bs_push()
        check_pushed(run(self.bs(push_dir, "push"), env=self.remote_env), n)
        listed = sum(1 for _ in ref.Client(self.host, p).list("books", mask_names=True))
        if listed != n:
            raise SystemExit("bench: after booksync push the collection holds %d documents, not %d" % (listed, n))
        self.wipe(p)
        p = self.project("mpush")
        run(self.refcmd("push", push_dir, p))
        self.wipe(p)
        b_row = Row("push of N new records", n, "booksync", "")
        m_row = Row("", n, "minimal client", "")
        v_row = Row("", n, "naive client", " (no warm-up)")
        p = bs_push()
        r = self.counted(b_row, self.bs(push_dir, "push"), env=self.proxied_env())
        check_pushed(r, n)
        self.wipe(p)
        p = self.project("mpush")
        self.counted(m_row, self.refcmd("push", push_dir, p, host=self.proxy.host))
        self.wipe(p)
        if naive_runs:
            p = self.project("npush")
            self.counted(v_row, self.refcmd("push", push_dir, p, host=self.proxy.host, naive=True))
            self.wipe(p)
        bs_project = ref_project = None
        for i in range(runs):
            if ref_project:
                self.wipe(ref_project)
            ref_project = self.project("mpush")
            m_row.add(run(self.refcmd("push", push_dir, ref_project)))
            if bs_project:
                self.wipe(bs_project)
            bs_project = bs_push()
            r = run(self.bs(push_dir, "push"), env=self.remote_env)
            check_pushed(r, n)
            b_row.add(r)
        for _ in range(naive_runs):
            p = self.project("npush")
            v_row.add(run(self.refcmd("push", push_dir, p, naive=True)))
            self.wipe(p)
        self.judge_bulk(b_row, m_row, v_row, "push of %s new records" % size, applies)
        self.rows += [b_row, m_row] + ([v_row] if naive_runs else [])

        # push-10: 10 changed records in an N-record collection (booksync and the minimal client each
        # in their own collection, both left in sync by the last push-all run)
        self.log("remote %d: push of %d changed records" % (n, CHANGED))
        files = [os.path.join(push_dir, i + ".json") for i in ids]
        values = iter(range(1, 1000))

        def change_local():
            edit_rating(push_dir, ids, 5.0 + next(values) / 100)

        change_local()
        check_pushed(run(self.bs(push_dir, "push"), env=self.remote_env), CHANGED)
        run(self.refcmd("push", push_dir, ref_project, update=True, files=files))
        b_row = Row("push of %d changed records in N" % CHANGED, n, "booksync", "")
        m_row = Row("", n, "minimal client (told which files)", "")
        change_local()
        r = self.counted(b_row, self.bs(push_dir, "push"), env=self.proxied_env())
        check_pushed(r, CHANGED)
        self.counted(m_row, self.refcmd("push", push_dir, ref_project, host=self.proxy.host,
                                                   update=True, files=files))
        for _ in range(runs):
            change_local()
            r = run(self.bs(push_dir, "push"), env=self.remote_env)
            check_pushed(r, CHANGED)
            b_row.add(r)
            m_row.add(run(self.refcmd("push", push_dir, ref_project, update=True, files=files)))
        ratio = b_row.wall / m_row.wall
        b_row.ratio = fmt_ratio(ratio) + " minimal"
        b_row.target = "≤ 2 requests"
        b_row.result = self.target("push of %d changed records in %s: ≤ 2 requests" % (CHANGED, size),
                                   "%d request(s): %s" % (b_row.counts["requests"], ", ".join(
                                       "%s %d" % (k, v["requests"]) for k, v in sorted(b_row.counts["by_kind"].items()))),
                                   b_row.counts["requests"] <= 2)
        self.rows += [b_row, m_row]
        for p in (bs_project, ref_project, pull_project):
            self.wipe(p)

    # ---- with a simulated network round trip ----
    def with_latency(self, n, ms):
        """First pull and push of n documents through count_proxy.py holding every
        request `ms` milliseconds: a round trip to a real Firestore instead of loopback,
        which is what "≥ 10× faster than one request per document" is about. One run
        of each client (the naive ones take n round trips)."""
        self.log("latency %d ms, %d documents: first pull and push" % (ms, n))
        base = os.path.join(self.work, "latency-%d" % n)
        gen = os.path.join(base, "gen")
        run([PY, MAKE_COLLECTION, gen, str(n), "3"])
        expected = tree_digest(gen)
        proxy = Proxy(self.host, latency_ms=ms)
        try:
            env = dict(self.remote_env, FIRESTORE_EMULATOR_HOST=proxy.host)

            def measured(row, cmd, cmd_env=None):
                proxy.reset()
                r = run(cmd, env=cmd_env, rss=True)
                row.add(r)
                row.set_rss(r)
                row.counts = proxy.counts()
                return r

            what = "with %d ms per request" % ms
            pull_project = self.project("lpull")
            run(self.refcmd("push", gen, pull_project))  # published directly, not timed
            rows = [Row("first pull, %s" % what, n, "booksync", ""), Row("", n, "minimal client", ""),
                    Row("", n, "naive client", "")]
            for warm_up in (True, False):  # booksync and the minimal client once unmeasured, as elsewhere
                d = self.fresh(os.path.join(base, "bs-pull"))
                self.init(d, pull_project)
                if warm_up:
                    run(self.bs(d, "pull"), env=env)
                    run(self.refcmd("pull", self.fresh(os.path.join(base, "m-pull")), pull_project, host=proxy.host))
            measured(rows[0], self.bs(d, "pull"), env)
            if tree_digest(d) != expected:
                raise SystemExit("bench: booksync pull through the latency proxy did not reproduce the records")
            measured(rows[1], self.refcmd("pull", self.fresh(os.path.join(base, "m-pull")), pull_project, host=proxy.host))
            measured(rows[2], self.refcmd("pull", self.fresh(os.path.join(base, "n-pull")), pull_project, host=proxy.host, naive=True))
            self.judge_bulk(*rows, "first pull of %s documents %s" % ("{:,}".format(n), what), n == 10_000)
            self.rows += rows
            self.wipe(pull_project)

            rows = [Row("push of N new records, %s" % what, n, "booksync", ""), Row("", n, "minimal client", ""),
                    Row("", n, "naive client", "")]
            for warm_up in (True, False):
                push_dir = self.fresh(os.path.join(base, "bs-push"))
                shutil.copytree(gen, push_dir, dirs_exist_ok=True)
                project = self.project("lpush")
                self.init(push_dir, project)
                if warm_up:
                    run(self.bs(push_dir, "push"), env=env)
                    self.wipe(project)
                    project = self.project("lpush")
                    run(self.refcmd("push", gen, project, host=proxy.host))
                    self.wipe(project)
            r = measured(rows[0], self.bs(push_dir, "push"), env)
            if "pushed %d" % n not in r.out:
                raise SystemExit("bench: booksync push through the latency proxy said:\n%s%s" % (r.out[-1000:], r.err[-1000:]))
            self.wipe(project)
            for row, naive in ((rows[1], False), (rows[2], True)):
                project = self.project("lpush")
                measured(row, self.refcmd("push", gen, project, host=proxy.host, naive=naive))
                self.wipe(project)
            self.judge_bulk(*rows, "push of %s new records %s" % ("{:,}".format(n), what), n == 10_000)
            self.rows += rows
        finally:
            proxy.stop()

    def judge_bulk(self, b_row, m_row, v_row, what, applies):
        ratio = b_row.wall / m_row.wall
        b_row.ratio = fmt_ratio(ratio) + " minimal"
        b_row.target = "≤ 1.3× minimal, ≥ 10× faster than naive"
        verdict = self.target("%s ≤ 1.3× the minimal client" % what,
                              "%s vs %s (%s)" % (fmt_time(b_row.wall), fmt_time(m_row.wall), fmt_ratio(ratio)),
                              ratio <= 1.3, applies)
        if v_row.walls:
            speedup = v_row.wall / b_row.wall
            v_row.ratio = "booksync %.1f× faster (minimal %.1f×)" % (speedup, v_row.wall / m_row.wall)
            verdict2 = self.target("%s ≥ 10× faster than the naive client" % what,
                                   "%s vs %s (%.1f×)" % (fmt_time(b_row.wall), fmt_time(v_row.wall), speedup),
                                   speedup >= 10, applies)
            verdict = verdict if verdict == verdict2 else "%s / %s" % (verdict, verdict2)
        b_row.result = verdict

    # ---- report ----
    def machine(self):
        def cmd(*c):
            try:
                return subprocess.run(c, capture_output=True, text=True, timeout=60).stdout.strip()
            except (OSError, subprocess.TimeoutExpired):
                return "?"
        cpu = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        mem = "?"
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = "%.1f GiB" % (int(line.split()[1]) / 1024 / 1024)
        fs = cmd("df", "-T", self.work).splitlines()[-1].split()[1] if os.path.exists(self.work) else "?"
        head = cmd("git", "-C", REPO, "rev-parse", "--short", "HEAD")
        dirty = cmd("git", "-C", REPO, "status", "--porcelain", "--", "Sources", "Package.swift")
        return [
            ("date", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
            ("nproc", cmd("nproc")),
            ("CPU", cpu),
            ("memory", mem),
            ("kernel", "%s %s" % (platform.system(), platform.release())),
            ("swift", cmd("swift", "--version").splitlines()[0] if cmd("swift", "--version") else "?"),
            ("git", cmd("git", "--version")),
            ("python", platform.python_version()),
            ("emulator", "cloud-firestore-emulator (google-cloud-sdk %s)" % (
                open("/usr/lib/google-cloud-sdk/VERSION").read().strip()
                if os.path.exists("/usr/lib/google-cloud-sdk/VERSION") else "?")),
            ("work directory file system", fs),
            ("booksync", self.args.bin_note or (
                "built from %s%s" % (head, " with uncommitted changes to Sources/" if dirty else "")
                if self.bin.startswith(os.path.join(REPO, ".build") + os.sep) else "binary at " + self.bin)),
            ("work directory", self.work),
            ("load average (1, 5, 15 min) before / after", "%s / %s" % (self.load_before, load_average())),
            ("creating a 500-byte file in the work directory, before / after", "%.0f µs / %.0f µs" % (
                self.creation_before or 0, self.creation_after or 0)),
        ]

    def report(self, started):
        args = self.args
        command = ("scripts/bench --local-sizes %s --remote-sizes %s --runs %d --local-runs %d --naive-runs %d "
                   "--latency-ms %d --latency-size %d") % (
            ",".join(map(str, args.local_sizes)), ",".join(map(str, args.remote_sizes)), args.runs, args.local_runs,
            args.naive_runs, args.latency_ms, args.latency_size)
        table = markdown_table(self.rows)
        summary = ["| target | measured | result |", "|---|---|---|"]
        for description, measured, verdict, applies in self.targets:
            summary.append("| %s | %s | %s |" % (description, measured, verdict))
        missed = [t for t in self.targets if t[3] and t[2] == "NOT MET"]
        return {"command": command, "table": table, "summary": "\n".join(summary), "missed": missed,
                "elapsed": time.time() - started}

    def write(self, report):
        path = self.args.output
        analysis = ("<!-- analysis -->\n_No analysis written yet: add it here; scripts/bench keeps this section._\n"
                    "<!-- /analysis -->")
        if os.path.exists(path):
            old = open(path).read()
            m = re.search(r"<!-- analysis -->.*?<!-- /analysis -->", old, re.S)
            if m:
                analysis = m.group(0)
        machine = "\n".join("| %s | %s |" % kv for kv in self.machine())
        missed = "\n".join("- %s: %s" % (d, m) for d, m, _, _ in report["missed"]) or "- none"
        notes = "\n".join("- " + n for n in self.notes)
        text = f"""# booksync benchmarks

Produced by `{report['command']}` ({report['elapsed'] / 60:.1f} min). Reproduce with
`scripts/bench` (defaults: `--local-sizes 10000,100000 --remote-sizes 1000,10000`);
`scripts/bench --help` explains every option. Ratios compare medians measured in the
same run on the same data; a "(MET)" / "(NOT MET)" in parentheses is shown for a size
the target does not name (remote targets are stated for 10,000 documents, the peak
RSS target for 100,000 records).

## Machine

| | |
|---|---|
{machine}

## Results

Medians of `runs` measured runs (`--local-runs` for the local scenarios) after one warm-up run of each command (naive
client: `--naive-runs`, no warm-up, because it is slow); booksync and its reference
alternate run by run. Requests and bytes: one separate pass of each command through
`scripts/count_proxy.py`; "sent" is what the client sent (request lines, headers,
bodies), "received" what it got back. Peak RSS: `/usr/bin/time -f %M` in that pass
(remote) or in one extra run (local). Page cache warm in every local scenario.

{report['table']}

### Targets

{report['summary']}

Missed targets:

{missed}

### How each scenario is set up

- **status, unchanged**: N records from `scripts/make-collection.py`, a synced state
  written directly into `.booksync/manifest.json` as a sync writes it (config fingerprint; hash = sha256 of each file,
  revision {REVISION}), the same directory committed to a git repository. Both
  tools run once, then after {RACY_WAIT} s (older than booksync's 100 ms racy-clean
  window) the measured runs alternate `git status --porcelain` and `booksync status --offline`.
- **after touch**: every record file is touched (mtime and ctime change, content
  does not) before each measured run of either tool; the touch is not timed.
- **first status**: `.booksync/index` is deleted before each booksync run; the
  reference is `find -print0 | xargs -0 sha256sum` over the same files.
- **first pull**: a new empty directory per run (`booksync init` not timed); the
  collection was published once by the minimal client. The minimal client reads the
  whole collection with bodies in one `:runQuery` (paging through `GET …/books`,
  at most {EMULATOR_PAGE} per page on the emulator, is 4× slower) and writes
  canonical record files; its output and booksync's were checked byte for byte
  against the generated records.
- **push of N new**: a fresh Firestore project per run (wiped afterwards);
  booksync gets a fresh `.booksync/` (first scan included, as for a new collection);
  the minimal client sends :commit requests of 500 creates.
- **push of {CHANGED} changed**: `rating` of {CHANGED} records edited (canonical form kept) before each
  run; booksync finds them itself, the minimal client is given the {CHANGED} files and
  sends one :commit of updates.
- **pull of {CHANGED} changed**: `rating` of {CHANGED} remote documents changed by a REST commit
  with an update mask before each run (not timed); its ratio is against the minimal
  client's full pull (a client without a base has to download everything).
- **with N ms per request**: the first pull and the push of new records again, all
  three clients talking through `count_proxy.py --latency-ms N`, which holds every
  request N ms before forwarding it (a round trip to a real Firestore; on loopback a
  request costs under 1 ms, so one request per document is barely slower than batching
  there). One measured run each, after one unmeasured run of booksync and the
  minimal client.

**billed reads** is what Firestore would bill for the reads of a run, as
`count_proxy.py` counts them from the answers it forwarded: one read per document a
`:runQuery`, `documents.list` page or `:batchGet` returns (names-only listings
included; a `:batchGet` entry for a missing document counted as one too), at least one
per query, one per started 1,000 entries counted by a `count()` aggregation; writes
cost none. The free tier is 50,000 reads a day. `booksync -v` prints the same estimate
at the end of each remote command.

Other observations from this run:

{notes}

## Analysis

{analysis}
"""
        with open(path, "w") as f:
            f.write(text)


def sizes(text):
    try:
        values = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated numbers, got %r" % text)
    if any(v < CHANGED for v in values):
        raise argparse.ArgumentTypeError("sizes must be at least %d" % CHANGED)
    return values


def main():
    parser = argparse.ArgumentParser(
        prog="scripts/bench", description="Benchmark booksync against git status, sha256sum and reference Firestore clients.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--local-sizes", type=sizes, default=[10_000, 100_000], metavar="N,N",
                        help="record counts for the status scenarios (default 10000,100000; empty: skip)")
    parser.add_argument("--remote-sizes", type=sizes, default=[1_000, 10_000], metavar="N,N",
                        help="document counts for the pull/push scenarios (default 1000,10000; empty: skip)")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per remote command after a warm-up (default 3)")
    parser.add_argument("--local-runs", type=int, default=9,
                        help="measured runs per local command after a warm-up (default 9: they take milliseconds, "
                             "and a 20 ms run is easily disturbed)")
    parser.add_argument("--naive-runs", type=int, default=1,
                        help="measured runs of the slow naive client, no warm-up (default 1; 0 skips it)")
    parser.add_argument("--latency-ms", type=int, default=5,
                        help="simulated round trip for the latency scenario, in ms (default 5; 0 skips it)")
    parser.add_argument("--latency-size", type=int, default=1_000,
                        help="documents in the latency scenario (default 1000; 0 skips it)")
    parser.add_argument("--output", default=os.path.join(REPO, "BENCHMARKS.md"),
                        help="markdown file to write (default BENCHMARKS.md in the repository)")
    parser.add_argument("--bin", help="booksync binary (scripts/bench builds and passes it)")
    parser.add_argument("--bin-note", help="how the binary was built, for BENCHMARKS.md (default: from git)")
    parser.add_argument("--emulator-host", help="Firestore emulator host:port (scripts/bench starts one)")
    parser.add_argument("--workdir", help="directory for the generated data (scripts/bench passes a temporary one)")
    args = parser.parse_args()
    if not args.bin or not args.emulator_host or not args.workdir:
        parser.error("--bin, --emulator-host and --workdir are required (run scripts/bench, which provides them)")
    if not 1 <= args.runs <= 100 or not 1 <= args.local_runs <= 100 or not 0 <= args.naive_runs <= 100:
        parser.error("--runs and --local-runs must be 1..100 and --naive-runs 0..100")
    if not args.emulator_host.startswith("127.0.0.1:"):
        parser.error("the emulator must be on 127.0.0.1")
    started = time.time()
    bench = Bench(args)
    os.makedirs(bench.work, exist_ok=True)
    bench.creation_before = creation_cost(os.path.join(bench.work, "creation-probe-before"))
    try:
        # Remote scenarios first: the emulator (Java) burns CPU for a while after it
        # starts, which would disturb the local runs of a few milliseconds; by the end
        # it is idle. The report lists the local scenarios first all the same.
        if args.remote_sizes:
            bench.proxy = Proxy(args.emulator_host)
            for n in args.remote_sizes:
                bench.remote(n)
        if args.latency_size and args.latency_ms:
            bench.with_latency(args.latency_size, args.latency_ms)
        remote_rows, remote_targets = bench.rows, bench.targets
        bench.rows, bench.targets = [], []
        for n in args.local_sizes:
            bench.local(n)
        bench.rows += remote_rows
        bench.targets += remote_targets
    finally:
        if bench.proxy:
            bench.proxy.stop()
    bench.creation_after = creation_cost(os.path.join(bench.work, "creation-probe-after"))
    report = bench.report(started)
    print(report["table"])
    print()
    print(report["summary"])
    bench.write(report)
    print("\nwrote %s (%.1f min)" % (args.output, report["elapsed"] / 60))
    return 0


if __name__ == "__main__":
    sys.exit(main())
