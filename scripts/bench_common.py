#!/usr/bin/env python3
"""What every part of scripts/bench shares: running and timing commands, the emulator
and the counting proxy, generated data, table formatting, and BenchBase (the state
the scenarios share). See scripts/bench.py for what is measured and how."""
import hashlib
import http.client
import json
import os
import re
import select
import signal
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


def interrupt(process, timeout):
    """Stops a running command as Ctrl-C does (SIGINT), killing it if it has not ended within `timeout` seconds."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


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
    """Two decimals, or two significant digits below 0.01 (a watched status is 0.0019× git, not 0.00×)."""
    if x is None:
        return "–"
    return ("%.2f×" % x) if x >= 0.01 or x == 0 else ("%.2g×" % x)


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


class BenchBase:
    """The state every scenario shares (binary, emulator host, work directory, rows,
    targets, notes, the counting proxy) and the helpers they use to run booksync and
    the reference clients. The scenario mixins of bench_local, bench_remote and
    bench_status, and bench_report, build on it."""

    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.host = args.emulator_host
        self.work = os.path.abspath(args.workdir)
        self.rows = []
        self.remote_rows = []  # the rows of the remote scenarios, for the per-document table
        self.change_field = False  # whether the binary has `init --change-field` (bench.py sets it)
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
