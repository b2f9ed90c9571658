#!/usr/bin/env python3
"""Fault trials: booksync through scripts/fault_proxy.py against the emulator.

Usage: faults.py --bin BOOKSYNC --host 127.0.0.1:PORT [--records M] [--cycles C] [--rounds N] [--seed S]

For each fault kind (429 with Retry-After, 500, 503, reset connections, stalls
past the request timeout, truncated bodies, garbage JSON) and for a mix of
all of them, at a rate of 30%:
  - push M records, then pull them into a second directory, then C-1 more
    cycles of edits, push and pull, all through the faulty proxy; each run
    must end with exit 0 (retries absorbed the faults)
    or exit 3 with a sentence saying what failed — never a crash, never
    another status;
  - then the faults stop and the same commands run again: they must exit 0,
    report no conflict, and leave both directories equal to the remote
    (same checks as scripts/chaos.py).
Then with every request failing (rate 100%, 503): push and pull must give up
with exit 3 within the retry deadline, with a clear message, and change no
record file.
Prints one line per round and "N passed, M failed".
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
import urllib.request
import uuid

import chaos  # the checks after each round
from harness.booksync import SCRIPTS, Booksync, environment
from harness.scratch import scratch as scratch_directory

KINDS = ["429", "500", "503", "reset", "stall", "truncate", "garbage"]
# Short timeouts so stalls and retries stay bounded in a test run.
LIMITS = {"BOOKSYNC_REQUEST_TIMEOUT": "1", "BOOKSYNC_RETRY_DEADLINE": "20"}


def start_proxy(upstream, kinds, rate, seed):
    process = subprocess.Popen(
        [sys.executable, os.path.join(SCRIPTS, "fault_proxy.py"), "--upstream", upstream, "--kinds", kinds,
         "--rate", str(rate), "--seed", str(seed), "--stall", "2", "--max-seconds", "900"],
        stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().strip()
    if not line.startswith("PROXY "):
        process.kill()
        raise RuntimeError("fault proxy did not start: " + line)
    return process, line.split()[1]


def set_rate(proxy, rate):
    urllib.request.urlopen(urllib.request.Request("http://%s/__faults?rate=%s" % (proxy, rate), method="POST"), timeout=10).read()


def stats(proxy):
    return json.loads(urllib.request.urlopen("http://%s/__stats" % proxy, timeout=10).read())


def acceptable(result):
    """Exit 0, or exit 3 with a sentence; anything else (a crash, a usage error) is not."""
    if result.returncode == 0:
        return None
    if result.returncode == 3 and result.stderr.startswith("booksync: error: ") and "\n" == result.stderr[-1]:
        if "Optional(" in result.stderr or "Error Domain" in result.stderr:
            return "unreadable error: " + result.stderr.strip()
        return None
    return "exit %d: %s" % (result.returncode, (result.stdout + result.stderr)[-400:])


def faulty_round(index, kinds, args, scratch, rng):
    proxy_process, proxy = start_proxy(args.host, kinds, 0.3, rng.randint(0, 10**6))
    project = "faults-%d-%s" % (index, uuid.uuid4().hex[:12])  # never reused, even with the same seed
    alice, bob = os.path.join(scratch, "alice-%d" % index), os.path.join(scratch, "bob-%d" % index)
    problems, exits = [], []
    try:
        for directory in (alice, bob):
            os.makedirs(directory)
            args.faulty(directory, "-q", "init", "--firestore", project, "--collection", "books", host=proxy)
        chaos.make_records(alice, args.records, rng.randint(0, 10**6))
        for cycle in range(args.cycles):
            if cycle > 0:
                chaos.edit_some(alice, rng, args.records)
            for directory, command in ((alice, "push"), (bob, "pull"), (alice, "push"), (bob, "pull")):
                result = args.faulty(directory, command, "--force", host=proxy)
                exits.append(result.returncode)
                problem = acceptable(result)
                if problem:
                    problems.append("%s under faults: %s" % (command, problem))
        injected = stats(proxy)
        set_rate(proxy, 0)
        for directory, command in ((alice, "push"), (bob, "pull")):
            result = args.faulty(directory, command, host=proxy)
            if result.returncode != 0 or "conflict" in result.stdout or "remote changed" in result.stdout:
                problems.append("%s after faults stopped: exit %d %s" % (command, result.returncode, (result.stdout + result.stderr)[-300:]))
        for directory in (alice, bob):
            problems += chaos.problems_after(args.booksync, directory, args.host, project, scratch, synced_through=proxy)
        summary = ", ".join("%s %d" % (k, injected[k]) for k in KINDS if injected.get(k))
        label = "all kinds" if "," in kinds else kinds
        print("round %2d %-9s %3d requests, injected %-40s exits %s: %s" % (
            index, label, injected["requests"], summary or "none", "".join(str(e) for e in exits), "ok" if not problems else "FAILED"), flush=True)
        for p in problems:
            print("    " + p, flush=True)
        return problems, injected
    finally:
        proxy_process.kill()
        proxy_process.wait()


def exhausted_round(args, scratch, rng):
    """Every request fails: booksync must give up in bounded time, exit 3, touch nothing."""
    proxy_process, proxy = start_proxy(args.host, "503", 1.0, 1)
    problems = []
    try:
        directory = os.path.join(scratch, "exhausted")
        os.makedirs(directory)
        args.faulty(directory, "-q", "init", "--firestore", "faults-exhausted-" + uuid.uuid4().hex[:12], "--collection", "books", host=proxy)
        chaos.make_records(directory, 20, 3)
        before = {n: open(os.path.join(directory, n), "rb").read() for n in os.listdir(directory) if n.endswith(".json")}
        manifest = open(os.path.join(directory, ".booksync", "manifest.json"), "rb").read()
        for command in ("push", "pull", "status"):
            result = args.faulty(directory, command, host=proxy)
            seconds = result.seconds
            if result.returncode != 3 or "cannot reach Firestore" not in result.stderr:
                problems.append("%s: expected exit 3 'cannot reach Firestore', got %d %s" % (command, result.returncode, result.stderr.strip()[-300:]))
            if seconds > 60:
                problems.append("%s took %.0fs to give up" % (command, seconds))
        after = {n: open(os.path.join(directory, n), "rb").read() for n in os.listdir(directory) if n.endswith(".json")}
        if before != after or manifest != open(os.path.join(directory, ".booksync", "manifest.json"), "rb").read():
            problems.append("local state changed although nothing reached the server")
        print("round  x 503 on every request: push, pull and status gave up with exit 3: %s" % ("ok" if not problems else "FAILED"), flush=True)
        for p in problems:
            print("    " + p, flush=True)
        return problems
    finally:
        proxy_process.kill()
        proxy_process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host", required=True, help="FIRESTORE_EMULATOR_HOST of a running emulator")
    parser.add_argument("--records", type=int, default=600)
    parser.add_argument("--cycles", type=int, default=3, help="edit, push, pull cycles per round")
    parser.add_argument("--rounds", type=int, default=1, help="repetitions of the whole set of fault kinds")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    # Through the fault proxy with short timeouts, so stalls and retries stay bounded; the checks after
    # each round (chaos.problems_after) run as chaos.py runs them, against the emulator.
    args.faulty = Booksync(args.bin, env=environment(**LIMITS), timeout=120)
    args.booksync = Booksync(args.bin, host=args.host)
    passed = failed = 0
    totals = {k: 0 for k in KINDS}
    print("faults: seed %d, %d records, rate 30%%, request timeout 1 s, retry deadline 20 s" % (args.seed, args.records), flush=True)
    with scratch_directory("faults") as scratch:
        index = 0
        for _ in range(args.rounds):
            for kinds in KINDS + [",".join(KINDS)]:
                problems, injected = faulty_round(index, kinds, args, scratch, rng)
                index += 1
                for k in KINDS:
                    totals[k] += injected.get(k, 0)
                failed, passed = (failed + 1, passed) if problems else (failed, passed + 1)
        if exhausted_round(args, scratch, rng):
            failed += 1
        else:
            passed += 1
        print("faults injected: " + ", ".join("%s %d" % (k, totals[k]) for k in KINDS))
        print("faults: %d passed, %d failed" % (passed, failed))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
