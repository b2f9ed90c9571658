#!/usr/bin/env python3
"""A clone's state files at and past each cap: every command answers within 1 s (<doc:CollectionFormat>).

Usage: check-state-caps.py --bin BOOKSYNC [--host 127.0.0.1:PORT] [--limit SECONDS]

Every command reads .booksync/config.json, and those that choose a remote
read .booksync/remotes.json; a clone brings both. booksync caps them (the
file sizes, the number of remotes, of "enum" values, of declared fields) and
checks what is below the caps in linear time. For each cap this writes a
collection's file exactly at it, in the shape that costs most there, and one
past it, then runs every command in it: at the cap each must work (a
documented exit code, no refusal of the file), past it each that reads the
file must refuse it with exit 3 and a sentence naming the file, and every
run must end within the limit. A run over it is timed once more and the
faster counts: a busy machine's stall does not repeat, a cost that grows
with the file does. A local command still over it is held to the limit by
its CPU time (user and system, booksync's own), which other work on the
machine does not inflate as it does the wall time; a remote command's wall
time holds the emulator's answers too, so it stays the measure there.
Local commands always run; with --host (an emulator), status, diff, pull,
push, sync, seed and verify too.

The limit is 1 s, the promise of a release build (`swift build -c release`,
then --bin .build/release/booksync; slowest 0.5 s when measured). A debug
build's unoptimised SHA-256 of a 4 MiB config alone takes half a second, so
scripts/test, which has only the debug build, passes --limit 3: still below
what a pairwise check of 1,000 remotes costs there (4 s a command).

Unit tests check the caps and their sentences; timing is this script's, so
no test depends on the machine's speed. Prints one line per failed check
and "N passed, M failed".
"""
import argparse
import json
import os
import sys
import uuid

from harness.booksync import Booksync, environment
from harness.checks import Checks
from harness.scratch import scratch

CONFIG_BYTES = 4 << 20
REMOTES_BYTES = 1 << 20
MAX_REMOTES = 1000
MAX_ENUM = 10000
MAX_FIELDS = 20000
MAX_GROUP_IDS = 100  # distinct collection ids the subcollection paths end in (paths are not capped)

# A project of its own per run: the emulator keeps what earlier runs wrote.
REMOTE = {"type": "firestore", "project": "demo-caps-" + uuid.uuid4().hex[:8], "collection": "books"}


def config(schema=None):
    top = {"version": 1, "remote": REMOTE}
    if schema is not None:
        top["schema"] = schema
    return json.dumps(top)


def padded(text, size):
    return text + " " * (size - len(text.encode()))


def config_of_size(size):
    """config.json of `size` bytes whose schema fills it: fields of enums at the enum cap, the costliest shape."""
    fields, used = [], len(config({"required": []}).encode())
    while True:
        values = ["v%d-%s" % (i, "x" * 20) for i in range(MAX_ENUM)]
        field = {"name": "f%d" % len(fields), "type": "string", "enum": values}
        cost = len(json.dumps(field).encode()) + 2
        if used + cost > size - 64:
            break
        fields.append(field)
        used += cost
    return padded(config({"required": [], "optional": fields}), size)


def enum_config(count):
    return config({"required": [{"name": "genre", "type": "string", "enum": ["g%d" % i for i in range(count)]}]})


def fields_config(count):
    """`count` declared fields: maps of 10 and strings, required and optional."""
    maps = [{"name": "m%d" % i, "type": "map", "optional": [{"name": "n%d" % j, "type": "string"} for j in range(10)]}
            for i in range(count // 22)]
    strings = [{"name": "f%d" % i, "type": "string"} for i in range(count - 11 * len(maps))]
    half = len(strings) // 2
    return config({"required": maps + strings[:half], "optional": strings[half:]})


def subcollections_config(ids, paths=0):
    """Subcollection paths ending in `ids` distinct collection ids, and `paths` more two-level
    ones over the same ids. Paths themselves are not capped (config.json's size bounds
    them); each costs the scan a name to look for in every document folder, and its
    editor schema file, so the check holds commands to their time at 10,000."""
    listed = ["s%d" % i for i in range(ids)] + ["p%d/s%d" % (n, n % ids) for n in range(paths)]
    top = json.loads(config({"required": []}))
    top["subcollections"] = listed
    return json.dumps(top)


def remotes(count, collection="books"):
    entries = {"r%04d" % i: {"project": "p", "collection": collection} for i in range(count)}
    return json.dumps({"version": 1, "remotes": entries})


def remotes_of_size(size):
    """remotes.json of `size` bytes: the most remotes allowed, with collection paths (a/x/c) long enough to fill it."""
    base = len(remotes(MAX_REMOTES).encode())
    segment = "b" * ((size - base) // MAX_REMOTES - 4 + 5)
    text = remotes(MAX_REMOTES, segment + "/x/c")
    assert len(text.encode()) <= size, len(text.encode())
    return padded(text, size)


# (what, file, text at the cap, text past it, what the refusal says)
CASES = [
    ("config.json of 4 MiB", "config.json", lambda: config_of_size(CONFIG_BYTES), lambda: padded(config(), CONFIG_BYTES + 1),
     "the file is larger than 4 MiB, the most booksync reads of it"),
    ("10,000 enum values", "config.json", lambda: enum_config(MAX_ENUM), lambda: enum_config(MAX_ENUM + 1),
     "lists 10001 values; booksync takes at most 10000"),
    ("20,000 declared fields", "config.json", lambda: fields_config(MAX_FIELDS), lambda: fields_config(MAX_FIELDS + 1),
     "declares 20001 fields"),
    ("100 subcollection ids in 10,000 paths", "config.json", lambda: subcollections_config(MAX_GROUP_IDS, 10000),
     lambda: subcollections_config(MAX_GROUP_IDS + 1),
     "the subcollection paths end in 101 distinct collection ids; booksync syncs at most 100"),
    ("remotes.json of 1 MiB", "remotes.json", lambda: remotes_of_size(REMOTES_BYTES), lambda: padded(remotes(0), REMOTES_BYTES + 1),
     "the file is larger than 1 MiB, the most booksync reads of it"),
    ("1,000 remotes", "remotes.json", lambda: remotes(MAX_REMOTES), lambda: remotes(MAX_REMOTES + 1),
     "1001 remotes are defined; booksync reads at most 1000"),
]

# Commands and whether they read remotes.json (all read config.json).
LOCAL = [
    (["status", "--offline"], True), (["diff", "--offline"], True), (["remote", "list"], True),
    (["validate"], False), (["fmt", "--check"], False), (["schema", "--check"], False), (["schema", "--print"], False),
    (["schema", "--swift", "CapsDTO"], False),
]
REMOTE_COMMANDS = [
    (["status"], True), (["diff"], True), (["pull", "--dry-run"], True), (["push", "--dry-run"], True), (["sync"], True),
    (["seed", "--dry-run"], True), (["verify"], True),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host")
    parser.add_argument("--limit", type=float, default=1.0)
    options = parser.parse_args()
    booksync = Booksync(options.bin, env=environment(FIRESTORE_EMULATOR_HOST=options.host or "", BOOKSYNC_PROGRESS="none"),
                        timeout=60)
    commands = LOCAL + (REMOTE_COMMANDS if options.host else [])
    checks = Checks()
    check = checks.check
    with scratch("caps") as work:
        if options.host:
            # Untimed: the emulator answers a project's first request slowly.
            warm = os.path.join(work, "warm-up")
            os.makedirs(warm)
            for command in (["-q", "init", "--firestore", REMOTE["project"], "--collection", "books"], ["status"]):
                booksync(warm, *command, timeout=120)
        for what, name, at_cap, past_cap, refusal in CASES:
            for label, text, refused in [("at", at_cap(), False), ("past", past_cap(), True)]:
                root = os.path.join(work, "%s %s" % (label, what))
                os.makedirs(root)
                result = booksync(root, "-q", "init", "--firestore", REMOTE["project"], "--collection", "books")
                check(result.returncode == 0, "init: " + result.stderr)
                path = os.path.join(root, ".booksync", name)
                with open(path, "w") as f:
                    f.write(text)
                slowest = 0.0
                for command, reads_remotes in commands:
                    result = booksync(root, *command)
                    if result.seconds >= options.limit:
                        # Once more: a busy machine's stall does not repeat, a cost that grows with the file does.
                        result = min(booksync(root, *command), result, key=lambda run: run.seconds)
                    took = result.seconds
                    if took >= options.limit and (command, reads_remotes) in LOCAL:
                        # What the file costs a local command is CPU, which a
                        # loaded machine's waiting does not inflate.
                        took = result.cpu_seconds
                    slowest = max(slowest, took)
                    shown = "%s the cap (%s): %s" % (label, what, " ".join(command))
                    check(took < options.limit, "%s took %.2f s (limit %.1f s)" % (shown, took, options.limit))
                    reads = name == "config.json" or reads_remotes
                    if refused and reads:
                        check(result.returncode == 3 and (path + ": ") in result.stderr and refusal in result.stderr,
                              "%s: exit %d, expected the refusal: %s" % (shown, result.returncode, result.stderr[-500:]))
                    else:
                        check(result.returncode in (0, 1) and (path + ": ") not in result.stderr,
                              "%s: exit %d: %s" % (shown, result.returncode, result.stderr[-500:]))
                print("%-4s the cap: %-22s %d commands, slowest %.2f s (%d KiB)"
                      % (label, what, len(commands), slowest, len(text.encode()) >> 10), flush=True)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
