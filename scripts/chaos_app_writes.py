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

from harness.emulator import Client

SIGNALS = [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP]

# The commands stopped, in turn: a pull into a synced directory, a first clone,
# and a watch whose first round pulls the changes.
COMMANDS = ["pull", "clone", "watch"]


def set_genre(client, record_id, genre):
    client.patch("books/" + record_id, {"genre": {"stringValue": genre}}, mask=["genre"])


def read_genre(client, record_id):
    document = client.get("books/" + record_id)
    return None if document is None else document["fields"].get("genre", {}).get("stringValue")


def genres(directory):
    """id -> genre of every record file."""
    out = {}
    for name in os.listdir(directory):
        if name.endswith(".json"):
            out[name[:-5]] = json.load(open(os.path.join(directory, name), encoding="utf-8")).get("genre")
    return out


def trial(chaos, index, command, args, scratch, rng):
    """One trial; returns (problems, whether the signal landed mid-command)."""
    booksync, host = args.booksync, args.host
    project = "chaos-app-%d-%s" % (index, os.urandom(6).hex())
    directory = os.path.join(scratch, "app-trial-%d" % index)
    source = os.path.join(scratch, "app-source-%d" % index)
    os.makedirs(source)
    init = ["--firestore", project, "--collection", "books"]
    booksync(source, "-q", "init", *init)
    chaos.make_records(source, args.records, rng.randint(0, 10**6))
    if booksync(source, "-q", "push").returncode != 0:
        return ["setup push failed"], False
    earlier = genres(source)
    if command != "clone":
        os.makedirs(directory)
        booksync(directory, "-q", "init", *init)
        if booksync(directory, "-q", "pull").returncode != 0:
            return ["setup pull failed"], False
    # Every document changes remotely, so the stopped command writes many files.
    for name in os.listdir(source):
        if name.endswith(".json"):
            path = os.path.join(source, name)
            text = open(path, encoding="utf-8").read()
            open(path, "w", encoding="utf-8").write(text.replace('"genre": "', '"genre": "newer ', 1))
    if booksync(source, "-q", "push").returncode != 0:
        return ["setup push of the newer values failed"], False
    signal_number = rng.choice(SIGNALS)
    delay = rng.uniform(0.0, args.windows["app-" + command])
    states = []
    if command == "clone":
        landed, code = booksync.signal_after(None, ["clone"] + init + [directory], delay, signal_number, cwd=scratch, states=states)
    elif command == "watch":
        landed, code = booksync.signal_after(directory, ["watch", "--interval", "0.5"], delay, signal_number, states=states)
    else:
        landed, code = booksync.signal_after(directory, ["pull"], delay, signal_number, states=states)
    problems = []
    if landed and signal_number != signal.SIGKILL and code != 128 + signal_number:
        # Two endings the signal's timing allows, each read off /proc at the
        # moment it was sent, not assumed: the command had already ended (a
        # zombie not yet reaped), or booksync itself (not the helper) did not
        # listen for it yet, so it died by it, as any program then, and
        # wrote nothing.
        state = states[0] if states else None
        present = genres(directory) if os.path.isdir(directory) else {}
        ended = state is not None and state["state"] == "Z" and code == 0
        unheard = (state is not None and code == -signal_number and state["program"] == "booksync"
                   and not state["listening"] and present in ({}, earlier))
        if not ended and not unheard:
            problems.append("%s stopped by %s exited %s, not %d (stopped at the next record)" % (
                command, signal.Signals(signal_number).name, code, 128 + signal_number))
    if not os.path.isfile(os.path.join(directory, ".booksync", "config.json")):
        # A clone stopped before its init finished: nothing to check.
        return problems, landed
    # The app writes: back to the earlier value, a new value, deleted and restored.
    ids = sorted(earlier)
    touched = rng.sample(ids, min(len(ids), 30))
    expected = {}
    app = Client(host, project, timeout=30)
    for n, record_id in enumerate(touched):
        action = n % 3
        if action == 0:
            set_genre(app, record_id, earlier[record_id])
            expected[record_id] = earlier[record_id]
        elif action == 1:
            set_genre(app, record_id, "app edit %d" % n)
            expected[record_id] = "app edit %d" % n
        else:
            document = app.get("books/" + record_id)
            app.delete("books/" + record_id)
            app.patch("books/" + record_id, document["fields"])
            expected[record_id] = document["fields"]["genre"]["stringValue"]
    synced = booksync(directory, "sync", "--force")
    if synced.returncode != 0 or "conflict" in synced.stdout:
        problems.append("sync after the app's writes exit %d: %s" % (synced.returncode, (synced.stdout + synced.stderr)[-400:]))
    local = genres(directory)
    stale = [i for i in touched if read_genre(app, i) != expected[i]]
    if stale:
        problems.append("%d of %d documents the app wrote no longer hold its value (a stale file was pushed), e.g. %s: %r" % (
            len(stale), len(touched), stale[0], read_genre(app, stale[0])))
    app.close()
    wrong = [i for i in touched if local.get(i) != expected[i]]
    if wrong:
        problems.append("%d files do not hold the app's value, e.g. %s: %r" % (len(wrong), wrong[0], local.get(wrong[0])))
    problems += chaos.problems_after(booksync, directory, host, project, scratch)
    return problems, landed
