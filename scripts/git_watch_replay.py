"""The same git session twice: under a running watch, and with `booksync sync`
after each step instead (used by check-git-under-watch.py).

A step is what a person does (edit and commit, stash, stash pop, rebase); after
each, the watched run waits until the watch is done (the remote and the files
settled, status clean) and the other run syncs. Then, as a person who
versions the directory would, each run commits what the sync left. Both runs
must end with the same remote and the same files: the watch did exactly what
`sync` after each git command would have done.
"""
import json
import os
import subprocess
import sys
import time
import uuid

from harness import emulator, process
from harness.booksync import Booksync, environment

# Who commits in the repositories of these checks.
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def titles(directory):
    """id -> title of every record file."""
    return {n[:-5]: json.load(open(os.path.join(directory, n), encoding="utf-8"))["title"]
            for n in os.listdir(directory) if n.endswith(".json")}


def edit(directory, names, title):
    """Sets the title of the record files `names`, changing nothing else of them."""
    for name in names:
        path = os.path.join(directory, name)
        record = json.load(open(path, encoding="utf-8"))
        text = open(path, encoding="utf-8").read()
        open(path, "w", encoding="utf-8").write(
            text.replace('"title": %s' % json.dumps(record["title"], ensure_ascii=False), '"title": %s' % json.dumps(title), 1))


def scenarios(names):
    """name -> (steps before the watch starts, steps under it); a step is a label and
    its actions: git arguments, or ("edit", names, title)."""
    first, second = names[:8], names[8:16]
    return {
        "git stash pop": (
            [("edit 8 files, then stash them", ("edit", first, "stashed"), ["stash"])],
            [("git stash pop", ["stash", "pop"])],
        ),
        "git rebase": (
            [("branch feature: edit and commit 8 files", ["checkout", "-q", "-b", "feature"], ("edit", first, "feature"),
              ["commit", "-qam", "feature"]),
             ("master: edit and commit 8 others", ["checkout", "-q", "master"], ("edit", second, "master"), ["commit", "-qam", "master"]),
             ("back on feature", ["checkout", "-q", "feature"])],
            [("git rebase master", ["rebase", "-q", "master"]),
             ("edit 8 files, commit, git rebase -i style reset", ("edit", second, "after rebase"), ["commit", "-qam", "after"],
              ["reset", "-q", "--hard", "HEAD~1"])],
        ),
    }


def run(bin_path, host, scratch, records, name, steps, watched, make_collection):
    """Runs one scenario; returns (remote id -> title, file id -> title, problems)."""
    directory = os.path.join(scratch, "%s-%s" % ("watched" if watched else "synced", uuid.uuid4().hex[:8]))
    os.makedirs(directory)
    project = "git-replay-" + uuid.uuid4().hex[:12]
    env = environment(host, BOOKSYNC_WATCH_DIR=os.path.join(scratch, "watchers"), **GIT_IDENTITY)
    binary = Booksync(bin_path, env=env)
    problems = []

    def booksync(*arguments):
        return binary(directory, *arguments)

    def git(*arguments):
        return process.run(["git", "-C", directory, *arguments], env=env)

    def remote():
        return {d["name"].rsplit("/", 1)[1]: d["fields"]["title"]["stringValue"] for d in emulator.documents(host, project)}

    def settled():
        deadline = time.time() + 60
        while time.time() < deadline:
            time.sleep(1.5)
            if booksync("status", "--short", "--offline").stdout.strip() == "" and remote() == titles(directory):
                return True
        return False

    git("init", "-q", "-b", "master")
    booksync("-q", "init", "--firestore", project, "--collection", "books")
    make_collection(directory, records)
    booksync("-q", "push")
    git("add", "-A")
    git("commit", "-q", "-m", "start")
    git("config", "filter.slow.smudge", "sh -c 'case \"$1\" in *5.json) sleep 0.3;; *) sleep 0.01;; esac; cat' slow %f")
    git("config", "filter.slow.clean", "cat")
    with open(os.path.join(directory, ".git", "info", "attributes"), "w") as attributes:
        attributes.write("*.json filter=slow\n")
    before, under = steps

    def act(label, actions):
        for action in actions:
            if isinstance(action, tuple):
                edit(directory, action[1], action[2])
                continue
            result = git(*action)
            if result.returncode != 0:
                problems.append("%s: git %s failed: %s" % (label, " ".join(action), (result.stdout + result.stderr)[-200:]))

    for step in before:
        act(step[0], step[1:])
    watch = None
    if watched:
        watch = binary.start(directory, "watch", "--interval", "0.5", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # The watch's first round syncs what is there, and so does the other run.
        for step in [("the watch starts", ["status", "--short"])] + under:
            act(step[0], step[1:])
            if watched:
                if not settled():
                    problems.append("%s: the watch did not settle within 60 s" % step[0])
            else:
                synced = booksync("sync")
                if synced.returncode != 0:
                    problems.append("%s: sync exit %d: %s" % (step[0], synced.returncode, synced.stdout[-200:]))
            # What the sync left is committed, as a person versioning the directory would.
            git("add", "-A")
            git("commit", "-q", "-m", "synced after " + step[0])
        return remote(), titles(directory), problems
    finally:
        if watch is not None:
            process.stop(watch, 30)


def check(bin_path, host, scratch, records, make_collection, report):
    """Runs every scenario both ways and reports whether they agree."""
    probe = os.path.join(scratch, "names")
    os.makedirs(probe)
    make_collection(probe, records)
    names = sorted(n for n in os.listdir(probe) if n.endswith(".json"))
    for name, steps in scenarios(names).items():
        watched_remote, watched_files, watched_problems = run(bin_path, host, scratch, records, name, steps, True, make_collection)
        synced_remote, synced_files, synced_problems = run(bin_path, host, scratch, records, name, steps, False, make_collection)
        differing = sorted(k for k in set(watched_remote) | set(synced_remote) if watched_remote.get(k) != synced_remote.get(k))
        report("%s under a watch: the remote ends as sync after each step leaves it" % name,
               not differing and not watched_problems and not synced_problems,
               "%d documents differ, e.g. %s: watched %r, synced %r; %s" % (
                   len(differing), differing[:1], differing and watched_remote.get(differing[0]),
                   differing and synced_remote.get(differing[0]), (watched_problems + synced_problems)[:3]))
        report("%s under a watch: the files end as sync leaves them" % name, watched_files == synced_files,
               "%d files differ" % sum(1 for k in set(watched_files) | set(synced_files) if watched_files.get(k) != synced_files.get(k)))


if __name__ == "__main__":
    sys.exit("run scripts/check-git-under-watch.py")
