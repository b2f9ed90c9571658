#!/usr/bin/env python3
"""git's own commands under a running `booksync watch` leave the remote as
`sync` after the git command would.

Usage: check-git-under-watch.py --bin BOOKSYNC --host 127.0.0.1:PORT [--records N]

A collection in a git repository: branch master holds N records titled "A"
(pushed, committed), branch b the same records titled "B" (pushed, committed:
the remote holds B). On branch b a watch runs (`--interval 0.5`). Then, each
with the watch running:
  1. `git checkout master` through a smudge filter that sleeps 10 ms per
     record file and 0.4 s for every tenth (as git-lfs or a checkout of many
     files does): git writes the manifest first, then each file, and the
     watch's rounds are due between its writes. `sync` after it pulls B back into the
     files; the remote keeps B, and no document is deleted and created again
     (its createTime is unchanged).
  2. `git reset --hard` to the master commit again (files back to A): the same.
  3. a merge with a conflict in a record file left unfinished: the watch
     pushes nothing while MERGE_HEAD exists, and says it waits.
  4. `git stash pop` and `git rebase` (then `git reset --hard`) under a watch
     end with the remote and the files that `sync` after each of those
     commands leaves (scripts/git_watch_replay.py).
Every check prints a line; the closing line is "N passed, M failed".
Bounded: every wait has a deadline, and the watch is stopped at the end.
"""
import argparse
import os
import signal
import subprocess
import sys
import time
import uuid

import git_watch_replay
from harness import emulator, process
from harness.booksync import Booksync, environment, make_collection
from harness.scratch import scratch as scratch_directory


def remote_state(host, project):
    """id -> (title, createTime) of every document of books."""
    return {d["name"].rsplit("/", 1)[1]: (d["fields"].get("title", {}).get("stringValue"), d["createTime"])
            for d in emulator.documents(host, project)}


def record_files(directory):
    return [n for n in os.listdir(directory) if n.endswith(".json")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--records", type=int, default=200)
    args = parser.parse_args()
    # Run as a background command by a script without job control (`cmd &`),
    # this process inherits SIGINT ignored, and so would the watch, which
    # keeps an ignored SIGINT as nohup asks: Ctrl-C below would never stop it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    scratch_dir = scratch_directory("git-watch")
    scratch = scratch_dir.name
    env = environment(args.host, BOOKSYNC_WATCH_DIR=os.path.join(scratch, "watchers"), **git_watch_replay.GIT_IDENTITY)
    binary = Booksync(args.bin, env=env)
    directory = os.path.join(scratch, "books")
    os.makedirs(directory)
    project = "git-watch-" + uuid.uuid4().hex[:12]
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print("%s %s%s" % ("ok  " if ok else "FAIL", name, "" if ok else ": " + detail), flush=True)

    def booksync(*arguments):
        return binary(directory, *arguments)

    def git(*arguments):
        return process.run(["git", "-C", directory, *arguments], env=env)

    def wait_until(condition, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if condition():
                return True
            time.sleep(0.5)
        return condition()

    watch = None
    try:
        git("init", "-q", "-b", "master")
        booksync("-q", "init", "--firestore", project, "--collection", "books")
        make_collection(directory, args.records, 5)
        git_watch_replay.edit(directory, record_files(directory), "A")
        assert booksync("-q", "push").returncode == 0
        git("add", "-A")
        git("commit", "-q", "-m", "A")
        git("checkout", "-q", "-b", "b")
        git_watch_replay.edit(directory, record_files(directory), "B")
        assert booksync("-q", "push").returncode == 0
        git("add", "-A")
        git("commit", "-q", "-m", "B")
        created = {k: v[1] for k, v in remote_state(args.host, project).items()}
        # A slow smudge filter for record files, set in this repository only.
        # Pauses longer than the watch's push delay and poll interval, so rounds run between git's writes.
        git("config", "filter.slow.smudge", "sh -c 'case \"$1\" in *5.json) sleep 0.4;; *) sleep 0.01;; esac; cat' slow %f")
        git("config", "filter.slow.clean", "cat")
        with open(os.path.join(directory, ".git", "info", "attributes"), "w") as attributes:
            attributes.write("*.json filter=slow\n")
        log = open(os.path.join(scratch, "watch.log"), "w")
        # -v: the watch says if status cannot ask it (its socket's path too long, say).
        watch = binary.start(directory, "-v", "watch", "--interval", "0.5", stdout=log, stderr=subprocess.STDOUT)
        time.sleep(3)
        log.flush()
        watch_output = open(os.path.join(scratch, "watch.log")).read()
        refused = [line for line in watch_output.splitlines() if "status cannot ask this watch" in line]
        check("the watch runs and status can ask it", watch.poll() is None and not refused,
              (refused[0] if refused else watch_output[-400:]))

        def settled_to_b():
            remote = remote_state(args.host, project)
            return all(v[0] == "B" for v in remote.values()) and all(t == "B" for t in git_watch_replay.titles(directory).values()) \
                and booksync("status", "--short", "--offline").stdout.strip() == ""

        for step, command in [("git checkout master (slow filter)", ["checkout", "-q", "master"]),
                              ("git reset --hard master (from b)", None)]:
            if command is None:
                git("checkout", "-q", "b")
                wait_until(settled_to_b, 60)
                git("reset", "-q", "--hard", "master")
            else:
                started = time.time()
                git(*command)
                print("     (%s took %.1f s)" % (step, time.time() - started), flush=True)
            settled = wait_until(settled_to_b, 90)
            remote = remote_state(args.host, project)
            reverted = sorted(k for k, v in remote.items() if v[0] != "B")
            recreated = sorted(k for k, v in remote.items() if created.get(k) != v[1])
            missing = sorted(set(created) - set(remote))
            check(step + ": the remote keeps B", not reverted and not missing,
                  "%d documents hold another title, e.g. %s; %d missing" % (len(reverted), reverted[:3], len(missing)))
            check(step + ": no document deleted and created again", not recreated, "%d recreated, e.g. %s" % (len(recreated), recreated[:3]))
            check(step + ": the files hold B and status is clean", settled, booksync("status", "--short", "--offline").stdout[:300])
        # An unfinished merge with a conflict in a record file: nothing is pushed meanwhile.
        git("commit", "-q", "-am", "pulled B")
        first = sorted(n for n in os.listdir(directory) if n.endswith(".json"))[0]
        path = os.path.join(directory, first)

        def retitle(title):
            text = open(path, encoding="utf-8").read()
            open(path, "w", encoding="utf-8").write(text.replace('"title": "B"', '"title": "%s"' % title, 1))
            git("commit", "-q", "-am", title)
            return wait_until(lambda: remote_state(args.host, project)[first[:-5]][0] == title, 60)

        git("checkout", "-q", "-b", "other")
        retitle("C")
        git("checkout", "-q", "master")
        wait_until(lambda: remote_state(args.host, project)[first[:-5]][0] == "B", 60)
        retitle("D")
        merged = git("merge", "-q", "other")
        in_merge = os.path.exists(os.path.join(directory, ".git", "MERGE_HEAD"))
        before = remote_state(args.host, project)
        time.sleep(4)
        after = remote_state(args.host, project)
        check("an unfinished merge: nothing is pushed while MERGE_HEAD exists", in_merge and before == after,
              "merge exit %d, MERGE_HEAD %s, %d documents changed" % (merged.returncode, in_merge,
                                                                     sum(1 for k in after if before.get(k) != after[k])))
        log.flush()
        said = "waiting: a git merge is in progress" in open(os.path.join(scratch, "watch.log")).read()
        check("the watch says it waits for git", said, open(os.path.join(scratch, "watch.log")).read()[-400:])
        git("merge", "--abort")
        still_running = watch.poll() is None
        stopping = time.time()
        code = process.stop(watch, 30, signal.SIGINT)
        watch = None
        check("Ctrl-C stops the watch", still_running and code != -signal.SIGKILL and time.time() - stopping < 10,
              "exit %d after %.1f s" % (code, time.time() - stopping))
        # git stash pop and git rebase under a watch, against sync after each step.
        git_watch_replay.check(args.bin, args.host, scratch, 40,
                               lambda d, n: make_collection(d, n, 9),
                               check)
    finally:
        if watch is not None:
            process.stop(watch, 30, signal.SIGINT)
        scratch_dir.cleanup()
    passed = sum(1 for r in results if r)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
