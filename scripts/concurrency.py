#!/usr/bin/env python3
"""Concurrent writers: two booksync directories and a direct REST writer change
the same documents at the same time, over many rounds; no update may be lost.

Usage: concurrency.py --bin BOOKSYNC --host 127.0.0.1:PORT [--rounds N] [--records M] [--seed S]

Each writer owns one field of every shared record (alice: "a", bob: "b", the
app's REST writer: "r") and only ever increases it, so no change is a true
conflict and every change must survive: at the end each record holds the last
value each writer gave it. Alice also creates and deletes records of her own,
which nobody else edits (an edit racing her delete would be a real conflict),
and the app creates records of its own. In every round the app writes (with
update masks, like an app editing one field) while alice and bob edit their
files and run `booksync sync` concurrently; a sync that finds the remote moved
under it reports it and the next sync merges. After the rounds, writers stop
and alice and bob sync until both are clean (bounded).
Checks: the remote, alice and bob agree; every last value of every writer is
there; alice's deleted records are gone; every created record exists.
With --subcollections, the collection also syncs `reviews` as folders
(`init --subcollection reviews`) and half the shared records are reviews
(`c000/reviews/r1`, the file `c000/reviews/r1.json`) that all three writers
edit the same way, by path.
Prints per-round counts and "N passed, M failed".
"""
import argparse
import http.client
import json
import os
import random
import sys
import threading
import time
import uuid

import chaos
import chaos_subcollections
from harness import emulator
from harness.booksync import Booksync
from harness.scratch import scratch as scratch_directory


def canonical(record, review=False):
    lead = ["id"] if review else ["id", "title", "author", "genre"]
    keys = lead + sorted((k for k in record if k not in lead), key=lambda k: k.encode())
    return "{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(record[k], ensure_ascii=False)) for k in keys) + "\n}\n"


def read(directory, record_id):
    with open(os.path.join(directory, record_id + ".json"), encoding="utf-8") as f:
        return json.load(f)


def write(directory, record, record_id=None):
    """Writes the record file of `record_id` (a path id for a review; default: the record's own id)."""
    path = os.path.join(directory, (record_id or record["id"]) + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(canonical(record, review="/" in (record_id or "")))


def record_ids(directory, subcollections):
    """The ids of every record file (reviews by path id)."""
    if subcollections:
        return set(chaos_subcollections.local_records(directory))
    return {n[:-5] for n in os.listdir(directory) if n.endswith(".json")}


def app_write(client, record_id, field, value, create=False):
    """An app's write of one field, by a :commit with an update mask (`client`: a
    harness.emulator.Client of its own thread); True when it happened, False when
    it could not (the record was deleted), None when no answer came."""
    name = client.name("books/" + record_id)
    if create:
        fields = {"id": {"stringValue": record_id}, "title": {"stringValue": "App " + record_id},
                  "author": {"stringValue": "App"}, "genre": {"stringValue": "app"}, field: {"integerValue": str(value)}}
        body = {"writes": [{"update": {"name": name, "fields": fields}, "currentDocument": {"exists": False}}]}
    else:
        body = {"writes": [{"update": {"name": name, "fields": {field: {"integerValue": str(value)}}},
                            "updateMask": {"fieldPaths": [field]}, "currentDocument": {"exists": True}}]}
    try:
        client.commit(body["writes"])
        return True
    except emulator.Error:
        return False  # the record was deleted meanwhile: not a write that happened
    except (OSError, http.client.HTTPException):
        # No answer (the emulator can stall ~30 s on lock contention): the write
        # may or may not have happened.
        return None


def sync(booksync, directory):
    return booksync(directory, "sync", timeout=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--records", type=int, default=40)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--subcollections", action="store_true", help="half the shared records are reviews in subcollection folders")
    args = parser.parse_args()
    if args.subcollections:
        chaos.INIT_OPTIONS.extend(chaos_subcollections.INIT_ARGUMENTS)
    rng = random.Random(args.seed)
    project = "concurrency-" + uuid.uuid4().hex[:12]
    booksync = Booksync(args.bin, host=args.host)
    # The app's writes: one connection for its thread, one for the records it creates from this one.
    app_client, creator = emulator.Client(args.host, project, timeout=30), emulator.Client(args.host, project, timeout=30)
    with scratch_directory("concurrency") as scratch:
        alice, bob = os.path.join(scratch, "alice"), os.path.join(scratch, "bob")
        for d in (alice, bob):
            os.makedirs(d)
            booksync(d, "-q", "init", "--firestore", project, "--collection", "books", *chaos.INIT_OPTIONS)
        ids = ["c%03d" % i for i in range(args.records)]
        if args.subcollections:
            ids = ids[: args.records // 2] + ["c%03d/reviews/r1" % i for i in range(args.records - args.records // 2)]
        for i in ids:
            if "/" in i:
                write(alice, {"id": "r1", "text": "review of " + i, "a": 0, "b": 0, "r": 0}, i)
            else:
                write(alice, {"id": i, "title": "T " + i, "author": "A", "genre": "g", "a": 0, "b": 0, "r": 0})
        assert sync(booksync, alice).returncode == 0
        assert sync(booksync, bob).returncode == 0
        last = {"a": {i: 0 for i in ids}, "b": {i: 0 for i in ids}, "r": {i: 0 for i in ids}}
        created, deleted = set(), set()
        uncertain = {}  # record id -> values of app writes that got no answer
        unanswered = [0]
        counter_lock = threading.Lock()
        counter = [0]

        def next_value():
            with counter_lock:
                counter[0] += 1
                return counter[0]

        failures = []
        print("concurrency: seed %d, %d records%s, %d rounds" % (
            args.seed, args.records, " (half of them reviews)" if args.subcollections else "", args.rounds), flush=True)
        for round_index in range(args.rounds):
            live = [i for i in ids if i not in deleted]
            shared = [i for i in live if i.startswith("c")]  # the app never touches alice's own records
            stop = threading.Event()
            app_writes = [0]

            def app():
                for _ in range(200):
                    if stop.is_set():
                        return
                    record_id = app_rng.choice(shared)
                    value = next_value()
                    written = app_write(app_client, record_id, "r", value)
                    if written:
                        last["r"][record_id] = value
                        app_writes[0] += 1
                    elif written is None:
                        uncertain.setdefault(record_id, set()).add(value)
                        unanswered[0] += 1
                    time.sleep(0.01)

            app_rng = random.Random(rng.randint(0, 10**9))
            thread = threading.Thread(target=app)
            thread.start()
            edits = {"alice": 0, "bob": 0}
            for name, directory, field in (("alice", alice, "a"), ("bob", bob, "b")):
                for record_id in rng.sample(shared, min(len(shared), 5)):  # alice may delete her own records
                    if not os.path.exists(os.path.join(directory, record_id + ".json")):
                        continue  # not pulled yet
                    record = read(directory, record_id)
                    value = next_value()
                    record[field] = value
                    write(directory, record, record_id)
                    last[field][record_id] = value
                    edits[name] += 1
            # Alice creates one record and deletes one of hers; the app creates one.
            new_id = "alice-%d" % round_index
            write(alice, {"id": new_id, "title": "New", "author": "A", "genre": "g", "a": 0, "b": 0, "r": 0})
            created.add(new_id)
            if round_index > 0 and ("alice-%d" % (round_index - 1)) in created and os.path.exists(os.path.join(alice, "alice-%d.json" % (round_index - 1))):
                os.remove(os.path.join(alice, "alice-%d.json" % (round_index - 1)))
                deleted.add("alice-%d" % (round_index - 1))
                created.discard("alice-%d" % (round_index - 1))
            app_id = "app-%d" % round_index
            if app_write(creator, app_id, "r", 0, create=True):
                created.add(app_id)
            results = {}
            workers = [threading.Thread(target=lambda n=n, d=d: results.__setitem__(n, sync(booksync, d)))
                       for n, d in (("alice", alice), ("bob", bob))]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            stop.set()
            thread.join()
            codes = {n: r.returncode for n, r in results.items()}
            bad = {n: r for n, r in results.items() if r.returncode not in (0, 1) or "invalid" in r.stdout}
            for n, r in bad.items():
                failures.append("round %d: %s sync exit %d: %s" % (round_index, n, r.returncode, (r.stdout + r.stderr)[-300:]))
            # Record ids that pull deleted locally stay deleted for the checks.
            print("round %2d: app %3d writes, alice %d edits, bob %d edits, sync exits %s" % (
                round_index, app_writes[0], edits["alice"], edits["bob"], codes), flush=True)
            ids = sorted(set(ids) | {i for i in created if i.startswith("alice-")})
        # Settle: no more writers; sync until both are clean (bounded).
        for _ in range(6):
            ra, rb = sync(booksync, alice), sync(booksync, bob)
            sa = booksync(alice, "status", "--short")
            sb = booksync(bob, "status", "--short")
            if not sa.stdout.strip() and not sb.stdout.strip():
                break
        else:
            failures.append("not settled: alice %r bob %r" % (sa.stdout[-200:], sb.stdout[-200:]))
        remote = chaos.remote_documents(args.host, project)
        files_a = record_ids(alice, args.subcollections)
        files_b = record_ids(bob, args.subcollections)
        if not (files_a == files_b == set(remote)):
            failures.append("record sets differ: alice %d, bob %d, remote %d" % (len(files_a), len(files_b), len(remote)))
        lost = []
        for field, values in last.items():
            for record_id, value in values.items():
                if record_id in deleted or record_id not in files_a:
                    continue
                found = read(alice, record_id).get(field)
                # A write that got no answer may have happened: its value is fine if no answered write came later.
                if field == "r" and isinstance(found, int) and found > value and found in uncertain.get(record_id, ()):
                    continue
                if found != value:
                    lost.append("%s.%s: expected %s, found %s" % (record_id, field, value, read(alice, record_id).get(field)))
        for record_id in created:
            if record_id not in files_a:
                lost.append("%s was created and is missing" % record_id)
        for record_id in deleted:
            if record_id in files_a or record_id in remote:
                lost.append("%s was deleted and is back" % record_id)
        for record_id in files_a:
            if open(os.path.join(alice, record_id + ".json"), "rb").read() != open(os.path.join(bob, record_id + ".json"), "rb").read():
                lost.append("%s differs between alice and bob" % record_id)
        if lost:
            failures.append("%d lost or wrong values, e.g. %s" % (len(lost), lost[:5]))
        writes = sum(len([v for v in values.values() if v]) for values in last.values())
        print("concurrency: %d rounds, %d last values of three writers checked, %d lost; %d app writes got no answer" % (
            args.rounds, writes, len(lost), unanswered[0]))
        for f in failures:
            print("    " + f)
        print("concurrency: %d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
        app_client.close()
        creator.close()
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
