"""Crash trials of `resolve` (scripts/chaos.py, the "resolve" kind).

A synced directory and a second one change the same records on both sides:
the same field to different values (`genre`, a conflict), plus one field each
side alone changes (`year` locally, `pages` remotely). A pull stores the
conflicts; `resolve --ours` or `--theirs` of all of them is killed at a random
moment and run again, then `push` publishes. Nothing may be lost: push must
not find the remote changed (a resolution the kill forgot), and every record
must hold the chosen side's `genre` with both one-sided changes.
"""
import importlib.util
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("make_collection", os.path.join(HERE, "make-collection.py"))
make_collection = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_collection)


# What the rerun may say besides its resolutions: records the killed run
# settled, and the notices of a lock taken over from it.
NOTICES = ["has no unresolved conflict", "took over a lock left by process", "had swapped out of place are kept in"]


def _edit(directory, ids, changes):
    for record_id in ids:
        path = os.path.join(directory, record_id + ".json")
        record = json.load(open(path, encoding="utf-8"))
        record.update(changes)
        with open(path, "w", encoding="utf-8") as f:
            f.write(make_collection.canonical(record))


def prepare(booksync, directory, source, init_args, rng):
    """Leaves `directory` (records made, not yet pushed) with stored conflicts.
    Returns (resolve command, ids, choice), or a setup problem as a string."""
    if booksync(directory, "-q", "push").returncode != 0:
        return "setup push failed"
    booksync(source, "-q", "init", *init_args)
    if booksync(source, "-q", "pull").returncode != 0:
        return "setup pull of the second directory failed"
    names = sorted(n[:-5] for n in os.listdir(directory) if n.endswith(".json"))
    ids = sorted(rng.sample(names, max(4, len(names) // 4)))
    _edit(source, ids, {"genre": "remote", "pages": 2})
    if booksync(source, "-q", "push").returncode != 0:
        return "setup push of the remote edits failed"
    _edit(directory, ids, {"genre": "local", "year": 1})
    pulled = booksync(directory, "pull")
    conflicts = pulled.stdout.count("conflict")
    if conflicts < len(ids):
        return "setup pull reported %d conflicts for %d records: %s" % (conflicts, len(ids), pulled.stdout[-300:])
    choice = rng.choice(["--ours", "--theirs"])
    return ["resolve", choice] + ids, ids, choice


def problems_after_rerun(booksync, directory, rerun, ids, choice):
    """What is wrong once the killed resolve was run again and push published it."""
    problems = []
    # A record the killed run settled is no conflict any more; anything else is a failure.
    others = [line for line in rerun.stderr.splitlines()
              if not any(notice in line for notice in NOTICES)]
    if rerun.returncode not in (0, 1) or others or "conflict" in rerun.stdout.replace("unresolved conflict", ""):
        problems.append("resolve rerun exit %d: %s" % (rerun.returncode, (rerun.stdout + rerun.stderr)[-400:]))
    pushed = booksync(directory, "push")
    if pushed.returncode != 0 or "conflict" in pushed.stdout or "remote changed" in pushed.stdout:
        problems.append("push after resolve exit %d (a resolution was lost): %s" % (pushed.returncode, (pushed.stdout + pushed.stderr)[-400:]))
    genre = "local" if choice == "--ours" else "remote"
    wrong = []
    for record_id in ids:
        record = json.load(open(os.path.join(directory, record_id + ".json"), encoding="utf-8"))
        if (record.get("genre"), record.get("year"), record.get("pages")) != (genre, 1, 2):
            wrong.append(record_id)
    if wrong:
        problems.append("%d resolved records lost a side's change (want genre %r, year 1, pages 2), e.g. %s" % (len(wrong), genre, wrong[:3]))
    return problems
