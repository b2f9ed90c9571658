"""Benchmarks booksync against reference tools measured in the same run on the same data.

The Bench class here is the list of scenarios, put together from mixins that share
its state (sizes, runs, the emulator host): local.py (status --offline), remote.py
(pull and push, the latency scenario), status.py (status, pull of 10 changes, the
change field, the emulator's own listing cost), subcollections.py, pull_changes.py,
memory.py, watch.py, report.py (the Benchmarks article), all on common.py (running,
measuring, formatting) and the shared scripts/harness. reference.py holds the
reference clients, scripts/count_proxy.py the counting proxy.

Normally started through scripts/bench, which builds booksync (release), starts the
Firestore emulator, runs `python3 -m benchmark` with scripts/ on PYTHONPATH, and
stops the emulator afterwards. Every scenario runs once as a warm-up
(not reported), then --runs times; the table shows medians. booksync and its
reference alternate run by run, so drift on the machine hits both alike.

Local scenarios (per --local-sizes), against `git status --porcelain` on the same
tree committed to a git repository, and `sha256sum` (through xargs) of all files:
  status-warm     `booksync status --offline`, unchanged tree, warm stat cache
  status-touched  the same right after `touch` of every record file (not timed)
  status-first    first status with no stat cache (.booksync/index deleted)
  status-watched  `booksync status --offline` while `booksync watch --no-sync` runs (it asks
                  the watcher what changed), unchanged and with 10 records edited, against
                  1/20 of git status or 50 ms; and the watcher's peak RSS

Remote scenarios (per --remote-sizes), against the Firestore emulator and the two
clients of scripts/benchmark/reference.py (minimal: fewest requests; naive: one request
per document):
  pull-all        first pull of N documents into an empty directory
  push-all        push of N new records into an empty collection
  seed            the same N records seeded one way into an empty collection
                  (booksync seed), against the minimal client's push
  push-10         push of 10 changed records in an N-record collection (and status
                  --offline of the same tree, and one request, for its target)
  pull-10         pull when 10 of N remote documents changed
  status-unchanged  `booksync status` on an unchanged N-document synced collection
  status-10       `booksync status` when 10 of N remote documents changed
  emulator        the emulator alone listing N documents: in booksync's batches, in one query
With a binary whose `init --help` offers --change-field, status-unchanged, status-10 and
pull-10 run a second time on a collection whose documents carry a change field.
Subcollection scenario (--subcollection-books N, default 10,000; subcollections.py):
N books with 3 reviews each as folders (`init --subcollection reviews`): first pull,
`booksync status` unchanged, push of 10 changed reviews, with request counts
(listing costs pages of the books and of the reviews group, not a request per book).
Changed-pull scenario (--changes-pull N, default 0 = skipped; pull_changes.py):
N documents published, pulled, then every one changed remotely before each round and
pulled again: wall time and peak RSS of the pull of N changes (target ≤ 150 MB at
100,000), against --before-bin (an earlier booksync) in the same rounds (≤ 1.1×).
Whole-database scenario (--whole-database N, default 20,000; --scale: 200,000, the
issue's size; 0 skips it; whole_database.py): a database of 20 root collections, N
documents in all (`reviews` under some documents of three of them, `notes` under
one, `likes` under reviews, two levels deep), cloned whole by `booksync clone
--firestore P DIR` against the minimal client's `clone-db` (one :runQuery per root
collection, one collection-group :runQuery per subcollection id; discovering those
ids by one names-only query over the database, or told them), and `clone --dry-run`;
target ≤ 1.2× the minimal client at 200,000, and billed reads = documents + the
discovery cost the dry run printed.
Scoped scenario (--scoped-documents N, default 20,000; --scale: 100,000; 0 skips it;
--scoped-matching M, default 1,000; scoped.py): N books, M of them match `shard ==
7`; `booksync clone --collection books --where 'shard == 7'` against the minimal
client's same filtered :runQuery, then status and pull after 10 remote changes inside
the scope; billed reads ≈ M.
Memory scenario (--memory-records N, default 0 = skipped; --scale: 1,000,000;
memory.py): peak RSS of every command at N local records, each run once:
push of N new, status --offline, validate (text and --json), fmt --check, fmt,
then with 10 records edited status --offline, diff --offline, push --dry-run and
push of the 10.
For each remote scenario run at several sizes, a second table gives the time per
document at the largest size divided by that at the smallest.

--scale measures one size up: --local-sizes 1000000 --remote-sizes 10000,100000,
one measured run each (--runs 1 --local-runs 3), the memory scenario at
1,000,000 records, no naive client and no latency
scenario (both are about request counts, which the default sizes show); options
given explicitly win.

Wall times come from runs without a proxy (spawn to os.wait4). Requests and bytes
come from one separate pass of each remote command through scripts/count_proxy.py
(FIRESTORE_EMULATOR_HOST pointed at it). Peak RSS comes from `/usr/bin/time -f %M`
in that pass (remote) or in one extra run (local): os.wait4's own ru_maxrss cannot
be used, as Linux charges the child the RSS of this Python process it was forked from.

Results go to stdout and to the Benchmarks article (--output), which also gets the machine
description. The section between `<!-- analysis -->` and `<!-- /analysis -->` of an
existing article is kept, so hand-written analysis survives a re-run.

Nothing is deleted while measuring (ext4 allocates inodes slowly for a while after
mass deletion, which would skew whichever client runs next); directories of finished
runs are left in the work directory, which scripts/bench removes at the end.
"""
import argparse
import os
import sys
import time

from harness.booksync import Booksync

from .common import CHANGED, REPO, BenchBase, Proxy, creation_cost
from .local import LocalScenarios
from .memory import MemoryScenarios
from .pull_changes import PullChangesScenarios
from .remote import RemoteScenarios
from .report import Report
from .scoped import ScopedScenarios
from .status import StatusScenarios
from .subcollections import SubcollectionScenarios
from .watch import WatchScenarios
from .whole_database import WholeDatabaseScenarios

DEFAULTS = {"local_sizes": [10_000, 100_000], "remote_sizes": [1_000, 10_000], "runs": 3, "local_runs": 9,
            "naive_runs": 1, "latency_ms": 5, "latency_size": 1_000, "subcollection_books": 10_000,
            "memory_records": 0, "changes_pull": 0, "watch_records": 10_000, "watch_saves": 100, "watch_idle_seconds": 600,
            "whole_database": 20_000, "scoped_documents": 20_000, "scoped_matching": 1_000}
SCALE = dict(DEFAULTS, local_sizes=[1_000_000], remote_sizes=[10_000, 100_000], runs=1, local_runs=3, naive_runs=0,
             latency_size=0, memory_records=1_000_000, whole_database=200_000, scoped_documents=100_000)


class Bench(LocalScenarios, MemoryScenarios, PullChangesScenarios, RemoteScenarios, ScopedScenarios, StatusScenarios,
            SubcollectionScenarios, WatchScenarios, WholeDatabaseScenarios, Report, BenchBase):
    """Every scenario, sharing BenchBase's state."""


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
    parser.add_argument("--scale", action="store_true",
                        help="one size up: --local-sizes 1000000 --remote-sizes 10000,100000 --runs 1 --local-runs 3 "
                             "--naive-runs 0 --latency-size 0 --memory-records 1000000 --whole-database 200000 "
                             "--scoped-documents 100000 (options given explicitly win)")
    parser.add_argument("--local-sizes", type=sizes, metavar="N,N",
                        help="record counts for the status --offline scenarios (default 10000,100000; empty: skip)")
    parser.add_argument("--remote-sizes", type=sizes, metavar="N,N",
                        help="document counts for the remote scenarios (default 1000,10000; empty: skip)")
    parser.add_argument("--runs", type=int, help="measured runs per remote command after a warm-up (default 3)")
    parser.add_argument("--local-runs", type=int,
                        help="measured runs per local command after a warm-up (default 9: they take milliseconds, "
                             "and a 20 ms run is easily disturbed)")
    parser.add_argument("--naive-runs", type=int,
                        help="measured runs of the slow naive client, no warm-up (default 1; 0 skips it)")
    parser.add_argument("--latency-ms", type=int,
                        help="simulated round trip for the latency scenario, in ms (default 5; 0 skips it)")
    parser.add_argument("--latency-size", type=int,
                        help="documents in the latency scenario (default 1000; 0 skips it)")
    parser.add_argument("--subcollection-books", type=int,
                        help="books (with 3 reviews each, as subcollection folders) in the subcollection scenario (default 10000; 0 skips it)")
    parser.add_argument("--memory-records", type=int,
                        help="local records in the memory scenario: peak RSS of every command (default 0: skipped; "
                             "--scale: 1000000)")
    parser.add_argument("--changes-pull", type=int, metavar="N",
                        help="documents in the changed-pull scenario: a pull of N remote changes into a synced "
                             "directory, its time and peak RSS (default 0: skipped)")
    parser.add_argument("--changes-pull-field", metavar="FIELD",
                        help="run the changed-pull scenario on a collection with this change field (the change query)")
    parser.add_argument("--before-bin", help="an earlier booksync the changed-pull scenario also runs, in the same rounds "
                                             "(the reference of its time target)")
    parser.add_argument("--before-note", help="how --before-bin was built, for the table (default: its file name)")
    parser.add_argument("--whole-database", type=int, metavar="N",
                        help="documents in the whole-database clone scenario, in 20 root collections with subcollections "
                             "(default 20000; --scale: 200000; 0 skips it)")
    parser.add_argument("--scoped-documents", type=int, metavar="N",
                        help="documents in the scoped-pull scenario (default 20000; --scale: 100000; 0 skips it)")
    parser.add_argument("--scoped-matching", type=int, metavar="M",
                        help="of them, the documents that match the scope `shard == 7` (default 1000)")
    parser.add_argument("--watch-records", type=int,
                        help="documents in the live-sync scenario, booksync watch (default 10000; 0 skips it)")
    parser.add_argument("--watch-saves", type=int, help="timed saves in the live-sync scenario (default 100)")
    parser.add_argument("--watch-idle-seconds", type=int,
                        help="idle stretch whose billed reads the live-sync scenario counts (default 600; 0 skips it)")
    parser.add_argument("--output", default=os.path.join(REPO, "Sources", "BooksyncPackage.docc", "Benchmarks.md"),
                        help="markdown file to write (default: the Benchmarks article, Sources/BooksyncPackage.docc/Benchmarks.md)")
    parser.add_argument("--bin", help="booksync binary (scripts/bench builds and passes it)")
    parser.add_argument("--bin-note", help="how the binary was built, for the Benchmarks article (scripts/bench passes the commit it built; default: the binary's path)")
    parser.add_argument("--emulator-host", help="Firestore emulator host:port (scripts/bench starts one)")
    parser.add_argument("--workdir", help="directory for the generated data (scripts/bench passes a temporary one)")
    args = parser.parse_args()
    for name, value in (SCALE if args.scale else DEFAULTS).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if not args.bin or not args.emulator_host or not args.workdir:
        parser.error("--bin, --emulator-host and --workdir are required (run scripts/bench, which provides them)")
    if not 1 <= args.runs <= 100 or not 1 <= args.local_runs <= 100 or not 0 <= args.naive_runs <= 100:
        parser.error("--runs and --local-runs must be 1..100 and --naive-runs 0..100")
    if args.memory_records and args.memory_records < CHANGED:
        parser.error("--memory-records must be 0 (skip) or at least %d" % CHANGED)
    if args.whole_database and args.whole_database < 100:
        parser.error("--whole-database must be 0 (skip) or at least 100 (4 documents per root collection and their subcollections)")
    if args.scoped_documents and not (CHANGED <= args.scoped_matching and 8 * args.scoped_matching <= args.scoped_documents):
        parser.error("--scoped-matching must be at least %d and at most 1/8 of --scoped-documents (shard 7 of N/M shards)" % CHANGED)
    if not args.emulator_host.startswith("127.0.0.1:"):
        parser.error("the emulator must be on 127.0.0.1")
    started = time.time()
    bench = Bench(args)
    # The change-field path of <doc:Firestore>: its scenarios run only with a binary that has it.
    bench.change_field = Booksync(bench.bin, env=bench.local_env).offers("init", "--change-field")
    if not bench.change_field:
        bench.notes.append("This booksync has no `init --change-field`: the change-field scenarios did not run.")
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
        if args.subcollection_books:
            if not bench.proxy:
                bench.proxy = Proxy(args.emulator_host)
            bench.subcollections(args.subcollection_books)
        if args.whole_database:
            if not bench.proxy:
                bench.proxy = Proxy(args.emulator_host)
            bench.whole_database(args.whole_database)
        if args.scoped_documents:
            if not bench.proxy:
                bench.proxy = Proxy(args.emulator_host)
            bench.scoped(args.scoped_documents, args.scoped_matching)
        if args.changes_pull:
            if not bench.proxy:
                bench.proxy = Proxy(args.emulator_host)
            bench.changes_pull(args.changes_pull)
        if args.watch_records:
            if not bench.proxy:
                bench.proxy = Proxy(args.emulator_host)
            bench.watch(args.watch_records, max(1, args.watch_saves), max(0, args.watch_idle_seconds))
        remote_rows, remote_targets = bench.rows, bench.targets
        bench.remote_rows = remote_rows
        bench.rows, bench.targets = [], []
        for n in args.local_sizes:
            bench.local(n)
        if args.memory_records:
            bench.memory(args.memory_records)
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
