#!/usr/bin/env python3
"""A pull of many remote changes holds one chunk of bodies, not all of them.

  check-pull-memory.py --bin PATH/booksync --host HOST:PORT [--records N]

N records (default 20,000) are published and pulled into a second directory.
Then a quarter of the documents is changed remotely, as another app would (one
field, by REST commits), and pulled; then every document is changed and
pulled. The second pull holds three quarters of N more changes than the first:
its peak RSS (`/usr/bin/time -f %M`) may exceed the first's by at most 1 KiB a
change. A pull that held every changed body until the plan was applied (about
2.7 KB a document) grew by more than twice that; one that holds a chunk of
bodies grows only by what it keeps per record (the listing, the packed plan).
Comparing two pulls of the same binary keeps the bound the same for a debug
and a release build.

The collection has no change field. A pull through the change query holds a
few of the query's answers, of up to 5,000 documents each (`AnswerHandoff`):
at this size that is as much as all of them, so `PullChangesTests` and the
changed-pull scenario of scripts/bench (--changes-pull-field) cover it.

Memory only: timing belongs to scripts/bench. Run by scripts/test against the
debug build, in well under a minute.
"""
import argparse
import os
import re
import secrets
import sys
import time

from harness import process
from harness.booksync import Booksync, environment, make_collection
from harness.emulator import Client
from harness.scratch import scratch

PER_CHANGE_KB = 1  # what a pull may hold per remote change, at most


def run(booksync, directory, *args, rss=False):
    """Runs booksync in `directory`; returns (stdout+stderr, peak RSS in KiB or None). Fails loudly on a non-zero exit."""
    result = booksync(directory, *args, merge=True, rss=rss)
    if result.returncode != 0:
        raise SystemExit("check-pull-memory: %s failed (exit %d):\n%s" % (" ".join(result.args), result.returncode,
                                                                          result.stdout[-3000:]))
    if rss and result.rss_kb is None:
        raise SystemExit("check-pull-memory: /usr/bin/time reported no peak RSS")
    return result.stdout, result.rss_kb


def change_every_document(host, project, ids, value):
    """Sets `rating` of the documents `ids` to `value` by REST commits with an update
    mask, as another app would."""
    with Client(host, project) as client:
        client.update_fields("books", ids, {"rating": {"doubleValue": value}})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--bin", required=True, help="booksync binary")
    parser.add_argument("--host", default=os.environ.get("FIRESTORE_EMULATOR_HOST"), help="emulator host:port")
    parser.add_argument("--records", type=int, default=20_000, help="documents changed remotely (default 20000)")
    args = parser.parse_args()
    if not args.host or not args.host.startswith("127.0.0.1:"):
        parser.error("--host must be an emulator on 127.0.0.1")
    if not os.access(process.TIME, os.X_OK):
        raise SystemExit("check-pull-memory: %s is needed to measure the peak RSS" % process.TIME)
    started = time.time()

    def stage(what):
        print("  %5.1f s  %s" % (time.time() - started, what), flush=True)

    booksync = Booksync(args.bin, env=environment(args.host, drop=("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"), LC_ALL="C"),
                        timeout=600)
    project = "pullmem-" + secrets.token_hex(4)
    with scratch("pull-memory") as work:
        published = os.path.join(work, "published")
        pulled = os.path.join(work, "pulled")
        make_collection(published, args.records)
        os.makedirs(pulled)
        for directory in (published, pulled):
            run(booksync, directory, "-q", "init", "--firestore", project, "--collection", "books")
        stage("generated; pushing")
        run(booksync, published, "push")
        stage("pushed; first pull")
        out, first_kb = run(booksync, pulled, "pull", rss=True)
        ids = sorted(name[:-5] for name in os.listdir(pulled) if name.endswith(".json") and not name.startswith("."))
        if len(ids) != args.records:
            raise SystemExit("check-pull-memory: the first pull wrote %d records, not %d:\n%s" % (len(ids), args.records, out[-2000:]))
        few = ids[:len(ids) // 4]
        peaks = []
        for changed in (few, ids):
            stage("changing %d documents" % len(changed))
            change_every_document(args.host, project, changed, value=9.0 + len(peaks))
            stage("pulling %d changes" % len(changed))
            out, peak_kb = run(booksync, pulled, "-v", "pull", rss=True)
            if not re.search(r"\bpulled %d\b" % len(changed), out):
                raise SystemExit("check-pull-memory: the pull of %d changes said:\n%s" % (len(changed), out[-2000:]))
            peaks.append(peak_kb)
    growth_kb = peaks[1] - peaks[0]
    limit_kb = (len(ids) - len(few)) * PER_CHANGE_KB
    what = "%s remote changes" % "{:,}".format(len(ids))
    print("first pull %.1f MB; pull of %s changes %.1f MB; pull of %s %.1f MB: %+.1f MB (limit %+.1f MB); %.0f s" % (
        first_kb / 1024, "{:,}".format(len(few)), peaks[0] / 1024, what, peaks[1] / 1024, growth_kb / 1024, limit_kb / 1024,
        time.time() - started))
    if growth_kb > limit_kb:
        print("FAIL: the pull of %s peaked %.1f MB above the pull of %s changes, more than %d KiB a change: "
              "it holds the changed bodies instead of a chunk of them" % (
                  what, growth_kb / 1024, "{:,}".format(len(few)), PER_CHANGE_KB), file=sys.stderr)
        return 1
    print("ok: a pull of %s holds at most %d KiB a change more than one of a quarter of them" % (what, PER_CHANGE_KB))
    return 0


if __name__ == "__main__":
    sys.exit(main())
