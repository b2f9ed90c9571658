"""Crash trials in which an app writes between the kill and the rerun (used by chaos.py).

A pull, clone or watch that applies remote changes is stopped at a random
moment by SIGKILL, SIGTERM or SIGHUP. Then an app changes the remote before
anybody touches a file: it sets some documents back to their earlier value,
edits others, and deletes and restores others. `booksync sync` then runs.

A file the stopped command wrote holds the remote's newer value; if its base
did not learn that, the file reads as a local edit, and the sync pushes it over
the app's write (a stale value) or calls the record a conflict though nobody
edited it. So after the sync:
  - it exits 0 and reports no conflict;
  - every document the app wrote holds the app's value, remotely and in its file;
  - SIGTERM and SIGHUP stop the command cleanly: exit 128 + the signal, not death.
The common checks of chaos.py (`problems_after`) follow.
"""
import json
import os
import signal
import subprocess
import urllib.error
import urllib.request

SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP]

# The commands stopped, in turn: a pull into a synced directory, a first clone,
# and a watch whose first round pulls the changes.
COMMANDS = ["pull", "clone", "watch"]


def genre_url(host, project, record_id):
    return "http://%s/v1/projects/%s/databases/(default)/documents/books/%s" % (host, project, urllib.request.quote(record_id, safe=""))


def request(host, project, method, record_id, body=None, query=""):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(genre_url(host, project, record_id) + query, data=data, method=method,
                                 headers={"Authorization": "Bearer owner", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as response:
        text = response.read()
    return json.loads(text) if text else None


def set_genre(host, project, record_id, genre):
    request(host, project, "PATCH", record_id, {"fields": {"genre": {"stringValue": genre}}}, "?updateMask.fieldPaths=genre")


def read_genre(host, project, record_id):
    try:
        document = request(host, project, "GET", record_id)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise
    return document["fields"].get("genre", {}).get("stringValue")


def genres(directory):
    """id -> genre of every record file."""
    out = {}
    for name in os.listdir(directory):
        if name.endswith(".json"):
            out[name[:-5]] = json.load(open(os.path.join(directory, name), encoding="utf-8")).get("genre")
    return out


def stop_at_random(bin_path, directory, args, host, delay, signal_number, cwd=None):
    """Runs booksync and sends `signal_number` after `delay` s; returns (stopped mid-run, exit code)."""
    env = dict(os.environ, FIRESTORE_EMULATOR_HOST=host, NO_COLOR="1")
    command = [os.path.abspath(bin_path)] + (["-C", directory] if directory else []) + args
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return False, process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        process.send_signal(signal_number)
        try:
            return True, process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
            return True, "did not stop within 60 s"


def trial(chaos, index, command, args, scratch, rng):
    """One trial; returns (problems, whether the signal landed mid-command)."""
    run, host, bin_path = chaos.run, args.host, args.bin
    project = "chaos-app-%d-%s" % (index, os.urandom(6).hex())
    directory = os.path.join(scratch, "app-trial-%d" % index)
    source = os.path.join(scratch, "app-source-%d" % index)
    os.makedirs(source)
    init = ["--firestore", project, "--collection", "books"]
    run(bin_path, source, ["-q", "init"] + init, host)
    chaos.make_records(source, args.records, rng.randint(0, 10**6))
    if run(bin_path, source, ["-q", "push"], host).returncode != 0:
        return ["setup push failed"], False
    earlier = genres(source)
    if command != "clone":
        os.makedirs(directory)
        run(bin_path, directory, ["-q", "init"] + init, host)
        if run(bin_path, directory, ["-q", "pull"], host).returncode != 0:
            return ["setup pull failed"], False
    # Every document changes remotely, so the stopped command writes many files.
    for name in os.listdir(source):
        if name.endswith(".json"):
            path = os.path.join(source, name)
            text = open(path, encoding="utf-8").read()
            open(path, "w", encoding="utf-8").write(text.replace('"genre": "', '"genre": "newer ', 1))
    if run(bin_path, source, ["-q", "push"], host).returncode != 0:
        return ["setup push of the newer values failed"], False
    signal_number = rng.choice(SIGNALS)
    delay = rng.uniform(0.0, args.windows["app-" + command])
    if command == "clone":
        landed, code = stop_at_random(bin_path, None, ["clone"] + init + [directory], host, delay, signal_number, cwd=scratch)
    elif command == "watch":
        landed, code = stop_at_random(bin_path, directory, ["watch", "--interval", "0.5"], host, delay, signal_number)
    else:
        landed, code = stop_at_random(bin_path, directory, ["pull"], host, delay, signal_number)
    problems = []
    if landed and signal_number != signal.SIGKILL and code != 128 + signal_number:
        problems.append("%s stopped by %s exited %s, not %d (stopped at the next record)" % (
            command, signal.Signals(signal_number).name, code, 128 + signal_number))
    if not os.path.isfile(os.path.join(directory, ".booksync", "config.json")):
        # A clone stopped before its init finished: nothing to check.
        return problems, landed
    # The app writes: back to the earlier value, a new value, deleted and restored.
    ids = sorted(earlier)
    touched = rng.sample(ids, min(len(ids), 30))
    expected = {}
    for n, record_id in enumerate(touched):
        action = n % 3
        if action == 0:
            set_genre(host, project, record_id, earlier[record_id])
            expected[record_id] = earlier[record_id]
        elif action == 1:
            set_genre(host, project, record_id, "app edit %d" % n)
            expected[record_id] = "app edit %d" % n
        else:
            document = request(host, project, "GET", record_id)
            request(host, project, "DELETE", record_id)
            request(host, project, "PATCH", record_id, {"fields": document["fields"]})
            expected[record_id] = document["fields"]["genre"]["stringValue"]
    synced = run(bin_path, directory, ["sync", "--force"], host)
    if synced.returncode != 0 or "conflict" in synced.stdout:
        problems.append("sync after the app's writes exit %d: %s" % (synced.returncode, (synced.stdout + synced.stderr)[-400:]))
    local = genres(directory)
    stale = [i for i in touched if read_genre(host, project, i) != expected[i]]
    if stale:
        problems.append("%d of %d documents the app wrote no longer hold its value (a stale file was pushed), e.g. %s: %r" % (
            len(stale), len(touched), stale[0], read_genre(host, project, stale[0])))
    wrong = [i for i in touched if local.get(i) != expected[i]]
    if wrong:
        problems.append("%d files do not hold the app's value, e.g. %s: %r" % (len(wrong), wrong[0], local.get(wrong[0])))
    problems += chaos.problems_after(bin_path, directory, host, project, scratch)
    return problems, landed
