"""What every part of scripts/bench shares: running and timing commands (on
harness.process), the counting proxy, generated data, table formatting, and
BenchBase (the state the scenarios share). See __main__.py for what is measured
and how."""
import hashlib
import json
import os
import re
import select
import statistics
import subprocess
import sys
import time

from harness import process
from harness.emulator import Client

from . import reference as ref  # value conversion and canonical form

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PY = sys.executable
PROXY = os.path.join(REPO, "scripts", "count_proxy.py")
COMMAND_TIMEOUT = 1200.0  # seconds: any single command is killed after this
RACY_WAIT = 0.3  # seconds: older than booksync's 100 ms racy-clean window
REVISION = "2024-01-01T00:00:00.000000Z"
CHANGED = 10  # records changed in the incremental scenarios
EMULATOR_PAGE = 150  # the emulator's page size cap (documented, checked against the counts)
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


# --- running and measuring commands ----------------------------------------------------------

def run(cmd, cwd=None, env=None, timeout=COMMAND_TIMEOUT, ok=(0,), rss=False):
    """harness.process.run, timed from spawn to reap (Result.seconds; rss=True: Result.rss_kb);
    the benchmark stops when the command fails (an exit code not in `ok`) or times out."""
    try:
        result = process.run(cmd, cwd=cwd, env=env, timeout=timeout, rss=rss)
    except subprocess.TimeoutExpired:
        raise SystemExit("bench: command still running after %d s: %s" % (timeout, " ".join(cmd)))
    if ok is not None and result.returncode not in ok:
        raise SystemExit("bench: command failed (exit %d): %s\n%s%s" % (
            result.returncode, " ".join(cmd), result.stdout[-2000:], result.stderr[-2000:]))
    return result


def peak_rss_kb(pid):
    """VmHWM of a running process (its peak resident set so far), in KiB."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


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


# --- the counting proxy ----------------------------------------------------------------------

class Proxy:
    """scripts/count_proxy.py as a child process, read and reset over HTTP."""

    def __init__(self, upstream, latency_ms=0):
        self.control = None
        self.process = subprocess.Popen([PY, PROXY, "--upstream", upstream, "--latency-ms", str(latency_ms)],
                                        stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline().strip() if ready else ""
        if not line.startswith("COUNT_PROXY_HOST="):
            self.stop()
            raise SystemExit("bench: count_proxy.py did not start")
        self.host = line.split("=", 1)[1]
        self.control = Client(self.host, timeout=120)

    def reset(self):
        self.control.call("POST", "/__reset")

    def counts(self):
        status, payload = self.control.call("GET", "/__counts")
        return json.loads(payload)

    def stop(self):
        if self.control:
            self.control.close()
        process.stop(self.process)


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
    """Two decimals, or two significant digits below 0.01 (a watched status is 0.0019× git, not 0.00×)."""
    if x is None:
        return "–"
    return ("%.2f×" % x) if x >= 0.01 or x == 0 else ("%.2g×" % x)


class Row:
    """One line of the results table."""

    def __init__(self, scenario, size, client, runs, note=""):
        self.scenario, self.size, self.client = scenario, size, client
        self.walls = []
        self.cpus = []  # user + system CPU seconds of the measured runs, where the Result had them
        self.rss_kb = None
        self.runs_note = runs
        self.counts = None
        self.ratio = ""
        self.target = ""
        self.result = ""
        self.note = note

    def add(self, r):
        self.walls.append(r.seconds)
        if getattr(r, "cpu_seconds", None) is not None:
            self.cpus.append(r.cpu_seconds)

    def set_rss(self, r):
        self.rss_kb = r.rss_kb

    @property
    def wall(self):
        return median(self.walls)

    @property
    def cpu(self):
        return median(self.cpus)

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


class BenchBase:
    """The state every scenario shares (binary, emulator host, work directory, rows,
    targets, notes, the counting proxy) and the helpers they use to run booksync and
    the reference clients. The scenario mixins of local, remote, status and the
    others, and report, build on it."""

    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.host = args.emulator_host
        self.work = os.path.abspath(args.workdir)
        self.rows = []
        self.remote_rows = []  # the rows of the remote scenarios, for the per-document table
        self.change_field = False  # whether the binary has `init --change-field` (__main__.py sets it)
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
        with Client(self.host, project, timeout=120) as client:
            status = client.reset()
        if status != 200:
            self.log("wiping %s answered %d" % (project, status))

    # booksync and reference command lines
    def bs(self, directory, *args):
        return [self.bin, "-C", directory] + list(args)

    def refcmd(self, command, directory, project, host=None, naive=False, update=False, files=()):
        cmd = [PY, "-m", "benchmark.reference", command, directory, "--host", host or self.host, "--project", project]
        if naive:
            cmd.append("--naive")
        if update:
            cmd.append("--update")
        return cmd + list(files)

    def init(self, directory, project, change_field=None):
        os.makedirs(directory, exist_ok=True)
        extra = ["--change-field", change_field] if change_field else []
        run(self.bs(directory, "-q", "init", "--firestore", project, "--collection", "books", *extra), env=self.local_env)

    def counted(self, row, cmd, env=None):
        """Runs cmd once through the counting proxy, under /usr/bin/time; fills row's counts and RSS."""
        self.proxy.reset()
        directory = cmd[cmd.index("-C") + 1] if "-C" in cmd else None
        through_proxy = env is not None and env.get("FIRESTORE_EMULATOR_HOST") == self.proxy.host
        if directory and through_proxy:
            self.retarget(directory, self.host, self.proxy.host)
        try:
            r = run(cmd, env=env, rss=True)
        finally:
            if directory and through_proxy:
                self.retarget(directory, self.proxy.host, self.host)
        row.counts = self.proxy.counts()
        row.set_rss(r)
        return r

    @staticmethod
    def retarget(directory, old_host, new_host):
        """booksync pins a base to its endpoint (`emulator@HOST:PORT`), and the proxy
        is another port: the same emulator behind it is, for this one run, named as
        the base's target, so the counted run uses the base the others use."""
        path = os.path.join(directory, ".booksync", "manifest.json")
        if not os.path.exists(path):
            return
        text = open(path, encoding="utf-8").read()
        changed = text.replace('"emulator@%s ' % old_host, '"emulator@%s ' % new_host, 1)
        if changed != text:
            with open(path + ".retarget", "w", encoding="utf-8") as f:
                f.write(changed)
            os.replace(path + ".retarget", path)

    def proxied_env(self):
        return dict(self.remote_env, FIRESTORE_EMULATOR_HOST=self.proxy.host)

    def target(self, description, measured, met, applies=True):
        verdict = "MET" if met else "NOT MET"
        self.targets.append((description, measured, verdict if applies else "(%s)" % verdict, applies))
        return verdict if applies else "(%s)" % verdict
