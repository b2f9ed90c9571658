#!/usr/bin/env python3
"""Crash trials: kill -9 booksync at random moments during pull and push, rerun,
and check that nothing was lost, duplicated, half-written or reported falsely.

Usage: chaos.py --bin BOOKSYNC --host 127.0.0.1:PORT [--trials N] [--records M] [--seed S]

Each trial uses a fresh Firestore project on the emulator at --host:
  push trial: a directory with M records (plus edits and deletes after a first
              sync) is pushed; the push is killed with SIGKILL at a random
              moment, then pushed again to completion.
  pull trial: the remote holds M records (plus edits and deletes after a first
              sync); a pull is killed at a random moment, then run again.
  resolve trial: conflicts pull stored are settled by `resolve --ours` or
              `--theirs`, killed at a random moment, then run again and
              pushed (scripts/chaos_resolve.py: no resolution lost, both
              sides' one-sided changes kept).
  watch trial: a synced directory with pending edits (and deletes) is
              watched (`booksync watch --interval 0.5`), which pushes them;
              the watch is killed with SIGKILL at a random moment, then
              `push` finishes what it had not.
  app-pull, app-clone, app-watch trials: a pull, clone or watch applying
              a change to every document is stopped by SIGKILL, SIGTERM or
              SIGHUP; an app then sets documents back, edits them, deletes
              and restores them, and `sync` runs: no stale value is pushed
              over the app's and no untouched file becomes a conflict
              (scripts/chaos_app_writes.py).
After each trial:
  - the rerun exits 0 and reports no conflict and no "remote changed" line
    (a write whose answer was lost must be recognised, not reported);
  - `status --short` prints nothing;
  - no booksync temporary file is left anywhere in the directory;
  - every record file parses (booksync validate), and a fresh pull of the
    remote into a second directory gives byte-identical files, with the
    remote document count equal to the number of files;
  - the manifest lists exactly the files, each with the file's sha256 and
    the remote document's updateTime.
With --subcollections, the collection syncs `reviews` as folders
(scripts/chaos_subcollections.py): books get reviews (and one folder has no
book file), reviews are edited, deleted and added like books, and every check
above covers them by path id (`<book>/reviews/r1`).
Prints one line per trial and a closing line "N passed, M failed".
Bounded: each booksync run has a timeout, and the whole run a deadline.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import time
import uuid

import chaos_app_writes
import chaos_resolve
import chaos_subcollections
from harness.booksync import Booksync, environment, make_collection
from harness.emulator import Client
from harness.scratch import scratch as scratch_directory

# The commands killed, in turn.
KINDS = ["push", "pull", "resolve", "watch"] + ["app-" + c for c in chaos_app_writes.COMMANDS]

# `init` options of every directory of a run: --subcollections adds reviews.
INIT_OPTIONS = []


def remote_documents(host, project):
    """id -> updateTime of every document in books (and of its reviews with --subcollections)."""
    with Client(host, project, timeout=30) as client:
        docs = {d["name"].rsplit("/", 1)[1]: d["updateTime"] for d in client.list("books", mask=["__name__"])}
        if INIT_OPTIONS:
            docs.update(chaos_subcollections.remote_reviews(client))
    return docs


def make_records(directory, count, seed):
    make_collection(directory, count, seed)
    if INIT_OPTIONS:
        chaos_subcollections.add_reviews(directory, random.Random(seed))


def local_records(directory):
    """id -> bytes of every record file (reviews by path id with --subcollections)."""
    if INIT_OPTIONS:
        return chaos_subcollections.local_records(directory)
    return {n[:-5]: open(os.path.join(directory, n), "rb").read() for n in os.listdir(directory) if n.endswith(".json")}


def edit_some(directory, rng, count):
    """Modifies, deletes and adds a few records in place (canonical edits via booksync fmt later)."""
    names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    for name in rng.sample(names, min(len(names), max(1, count // 10))):
        path = os.path.join(directory, name)
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(text.replace('"genre": "', '"genre": "edited ', 1))
    for name in rng.sample(names, min(len(names), max(1, count // 20))):
        if os.path.exists(os.path.join(directory, name)):
            os.remove(os.path.join(directory, name))
    with scratch_directory("chaos-new") as extra:
        make_collection(extra, max(1, count // 10), rng.randint(1000, 9999))
        for name in os.listdir(extra):
            shutil.copy(os.path.join(extra, name), os.path.join(directory, "new-" + name))
            path = os.path.join(directory, "new-" + name)
            text = open(path, encoding="utf-8").read()
            record_id = name[:-5]
            open(path, "w", encoding="utf-8").write(text.replace('"id": "%s"' % record_id, '"id": "new-%s"' % record_id, 1))
    if INIT_OPTIONS:
        chaos_subcollections.edit_reviews(directory, rng, count)


def problems_after(booksync, directory, host, project, scratch, synced_through=None):
    """Everything wrong with a directory that should now equal the remote.

    `booksync` runs against `host`; `synced_through` is the endpoint the directory
    was synced with when that is not `host` (a fault proxy): its sync state belongs
    to that target, so its status is asked there; the remote's documents are read
    from `host`."""
    problems = []
    status = booksync(directory, "status", "--short", host=synced_through)
    if status.returncode != 0 or status.stdout.strip():
        problems.append("status not clean (exit %d): %s" % (status.returncode, status.stdout.strip()[:300]))
    for root, _, files in os.walk(directory):
        # Swapped-out files of a killed pull are kept in .booksync/recovered/, on purpose.
        recovered = root.endswith(os.path.join(".booksync", "recovered"))
        leftovers = [f for f in files if ".booksync-tmp-" in f or (".booksync-swap-" in f and not recovered)]
        if leftovers:
            problems.append("temporary files left in %s: %s" % (root, leftovers[:3]))
    validate = booksync(directory, "-q", "validate", host=synced_through)
    if validate.returncode != 0:
        problems.append("invalid files: " + validate.stdout.strip()[:300])
    records = local_records(directory)
    remote = remote_documents(host, project)
    if set(remote) != set(records):
        problems.append("remote has %d documents, directory %d files (missing remotely: %s, missing locally: %s)" % (
            len(remote), len(records), sorted(set(records) - set(remote))[:3], sorted(set(remote) - set(records))[:3]))
    fresh = os.path.join(scratch, "fresh-%d" % random.randint(0, 10**9))
    os.makedirs(fresh)
    booksync(fresh, "-q", "init", "--firestore", project, "--collection", "books", *INIT_OPTIONS, host=host)
    pulled = booksync(fresh, "-q", "pull", host=host)
    if pulled.returncode != 0:
        problems.append("fresh pull failed: " + pulled.stdout[-300:] + pulled.stderr[-300:])
    fresh_records = local_records(fresh)
    differing = [k for k in records if fresh_records.get(k) != records[k]]
    if differing or set(fresh_records) != set(records):
        problems.append("directory differs from the remote in %d records, e.g. %s" % (len(differing), differing[:3]))
    manifest = json.load(open(os.path.join(directory, ".booksync", "manifest.json")))["records"]
    if set(manifest) != set(records):
        problems.append("manifest lists %d records, directory has %d" % (len(manifest), len(records)))
    else:
        wrong = [k for k, v in manifest.items()
                 if v["hash"] != "sha256:" + hashlib.sha256(records[k]).hexdigest() or v["revision"] != remote.get(k)]
        if wrong:
            problems.append("manifest disagrees for %d records, e.g. %s" % (len(wrong), wrong[:3]))
    shutil.rmtree(fresh)
    return problems


def trial(index, kind, args, scratch, rng):
    if kind.startswith("app-"):
        problems, killed = chaos_app_writes.trial(sys.modules[__name__], index, kind[4:], args, scratch, rng)
        print("trial %3d %-9s %s: %s" % (index, kind, "stopped mid-command" if killed else "(finished first)",
                                          "ok" if not problems else "FAILED"), flush=True)
        for p in problems:
            print("    " + p, flush=True)
        return problems, killed
    project = "chaos-%d-%s" % (index, uuid.uuid4().hex[:12])  # never reused, even with the same seed
    directory = os.path.join(scratch, "trial-%d" % index)
    os.makedirs(directory)
    booksync = args.booksync
    booksync(directory, "-q", "init", "--firestore", project, "--collection", "books", *INIT_OPTIONS)
    if kind == "watch":
        make_records(directory, args.records, rng.randint(0, 10**6))
        first = booksync(directory, "-q", "push")
        if first.returncode != 0:
            return ["setup push failed: " + first.stdout[-200:]], False
        edit_some(directory, rng, args.records)
        # A watch never ends by itself: it is always killed, somewhere in its first pull and push.
        command = ["watch", "--interval", "0.5"]
    elif kind == "push":
        make_records(directory, args.records, rng.randint(0, 10**6))
        if rng.random() < 0.5:  # start from a synced state with pending edits
            first = booksync(directory, "-q", "push")
            if first.returncode != 0:
                return ["setup push failed: " + first.stdout[-200:]], False
            edit_some(directory, rng, args.records)
        command = ["push"]
    elif kind == "pull":
        source = os.path.join(scratch, "source-%d" % index)
        os.makedirs(source)
        booksync(source, "-q", "init", "--firestore", project, "--collection", "books", *INIT_OPTIONS)
        make_records(source, args.records, rng.randint(0, 10**6))
        if booksync(source, "-q", "push").returncode != 0:
            return ["setup push failed"], False
        if rng.random() < 0.5:  # pull changes into a synced directory
            booksync(directory, "-q", "pull")
            edit_some(source, rng, args.records)
            if booksync(source, "-q", "push", "--force").returncode != 0:
                return ["setup push of edits failed"], False
        command = ["pull"]
    else:
        make_records(directory, args.records, rng.randint(0, 10**6))
        source = os.path.join(scratch, "source-%d" % index)
        os.makedirs(source)
        prepared = chaos_resolve.prepare(booksync, directory, source, ["--firestore", project, "--collection", "books"] + INIT_OPTIONS,
                                         rng)
        if isinstance(prepared, str):
            return [prepared], False
        command, resolved_ids, choice = prepared
    delay = rng.uniform(0.0, args.windows[kind])
    killed, _ = booksync.signal_after(directory, command, delay)
    problems = []
    if kind == "resolve":
        rerun = booksync(directory, *command)
        problems += chaos_resolve.problems_after_rerun(booksync, directory, rerun, resolved_ids, choice)
    else:
        rerun = booksync(directory, *(["push"] if kind == "watch" else command), "--force")
        if rerun.returncode != 0 or "conflict" in rerun.stdout or "remote changed" in rerun.stdout:
            problems.append("rerun exit %d: %s" % (rerun.returncode, (rerun.stdout + rerun.stderr)[-400:]))
    problems += problems_after(booksync, directory, args.host, project, scratch)
    print("trial %3d %-7s kill after %.2fs%s: %s" % (
        index, kind, delay, "" if killed else " (finished first)", "ok" if not problems else "FAILED"), flush=True)
    for p in problems:
        print("    " + p, flush=True)
    shutil.rmtree(directory, ignore_errors=True)
    return problems, killed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="the booksync executable")
    parser.add_argument("--host", required=True, help="FIRESTORE_EMULATOR_HOST of a running emulator")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--window", type=float, default=None, help="kill within this many seconds (default: measured)")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--deadline", type=float, default=1800, help="stop starting trials after this many seconds")
    parser.add_argument("--kinds", default=",".join(KINDS), help="the commands to kill, in turn (default: %(default)s)")
    parser.add_argument("--subcollections", action="store_true", help="books with reviews as folders (init --subcollection reviews)")
    args = parser.parse_args()
    if args.subcollections:
        INIT_OPTIONS.extend(chaos_subcollections.INIT_ARGUMENTS)
    rng = random.Random(args.seed)
    with scratch_directory("chaos") as scratch:
        # A killed watch leaves its socket behind: in the scratch folder, not in /tmp/booksync-UID.
        args.booksync = Booksync(args.bin, env=environment(args.host, BOOKSYNC_WATCH_DIR=os.path.join(scratch, "watchers")))
        started = time.time()
        if args.window is None:
            # Calibrate: how long an uninterrupted push of this size takes, after
            # a first one that warms up the emulator (its first writes are slow).
            timings = []
            for attempt in range(2):
                directory = os.path.join(scratch, "calibrate-%d" % attempt)
                os.makedirs(directory)
                args.booksync(directory, "-q", "init", "--firestore", "chaos-calibrate-" + uuid.uuid4().hex[:12], "--collection", "books",
                              *INIT_OPTIONS)
                make_records(directory, args.records, 1)
                t = time.time()
                args.booksync(directory, "-q", "push")
                timings.append(time.time() - t)
                shutil.rmtree(directory)
            args.window = max(0.05, timings[-1])
        # Each kind aims its kills on its own: resolve is quicker than a push.
        kinds = [kind for kind in args.kinds.split(",") if kind in KINDS] or KINDS
        if INIT_OPTIONS:  # the app's writes are aimed at books alone
            kinds = [kind for kind in kinds if not kind.startswith("app-")]
        args.windows = {kind: args.window for kind in kinds}
        print("chaos: seed %d, %d trials of %d records%s, kills within %.2fs" % (
            args.seed, args.trials, args.records, " with reviews" if INIT_OPTIONS else "", args.window), flush=True)
        passed = failed = killed = 0
        i = 0
        # The planned trials, then, while fewer than a third of the kills landed
        # mid-command (the window was measured on a busier machine), more of them
        # aimed ever earlier: at most three times as many in all.
        while i < args.trials or (killed * 3 < passed + failed and i < 3 * args.trials):
            if time.time() - started > args.deadline:
                print("chaos: deadline reached after %d trials" % i)
                break
            kind = kinds[i % len(kinds)]
            problems, was_killed = trial(i, kind, args, scratch, rng)
            if problems:
                failed += 1
            else:
                passed += 1
            if was_killed:
                killed += 1
            else:
                args.windows[kind] *= 0.8  # the command was faster than the window: aim earlier
            i += 1
        print("chaos: %d passed, %d failed; %d of %d killed mid-command" % (passed, failed, killed, passed + failed))
        if killed * 3 < passed + failed:
            print("chaos: FAILED: fewer than a third of the kills landed while booksync ran, so crashes were not tested")
            return 1
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
