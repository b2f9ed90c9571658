#!/usr/bin/env python3
"""A cloned collection is untrusted input (<doc:Safety>): the attack, end to end.

Usage: hostile-clone.py --bin BOOKSYNC --host 127.0.0.1:PORT

Builds git repositories the way an attacker would publish a data repository:
committed symbolic links where booksync keeps its state (one variant each:
.booksync itself, lock, index, manifest, base/pack, conflicts) and where records
live (to /etc/passwd and to a file outside), a `remote.tokenCommand` in the
committed config.json, a record file whose name carries terminal escapes, and a
remote collection (on the emulator) with hostile document ids and field names:
escape sequences, a bidi override, a 1,500-byte id, café in NFC and NFD, quotes
and backslashes. Each repository is cloned with `git clone`, a FIFO named like a
record is added (git cannot commit one), and every command is run in the clone.

Checks after every command:
  - nothing outside the clone changed (files, modes, /etc/passwd), and no
    temporary file was left outside;
  - no program named in the clone ran (its marker file does not exist);
  - the access token never appears on stdout or stderr;
  - no control character reaches the terminal: only newline and tab, and with
    --color always only booksync's own SGR colour sequences;
  - the command ended with a documented exit code (0–4), within a time bound
    (a FIFO must not hang it).
Prints one line per failed check and "N passed, M failed".
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
import uuid

from harness.booksync import Booksync
from harness.emulator import Client
from harness.scratch import scratch as scratch_directory

TOKEN = "ya29.hostile-clone-SECRET-token-0123456789"
COMMAND_TIMEOUT = 60
SGR = re.compile(rb"\x1b\[[0-9;]*m")
BAD_BYTES = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")

HOSTILE_IDS = [
    "x\x1b]0;PWNED\x07\x1b[2J",     # retitles and clears a terminal
    "bidi\u202egnp.exe",            # reorders what is shown
    "cr\rfake line",
    "a" * 1500,                     # longest id Firestore allows: too long for a file name
    unicodedata.normalize("NFC", "café"),
    unicodedata.normalize("NFD", "café"),
    'quo"te\\back',
    "dune",
]


def seed_remote(host, project, marker):
    client = Client(host, project)
    writes = []
    for i, doc_id in enumerate(HOSTILE_IDS):
        fields = {
            "id": {"stringValue": doc_id},
            "title": {"stringValue": "$(touch %s) \x1b[31mred\x1b[0m" % marker},
            "author": {"stringValue": "A\u202eB"},
            "genre": {"stringValue": "g"},
            "n": {"integerValue": str(i)},
        }
        if doc_id == "dune":
            fields["\x1b[2Jfield"] = {"stringValue": "control characters in a field name"}
        writes.append({"update": {"name": client.name("books/" + doc_id), "fields": fields}})
    client.commit(writes)
    client.close()


def snapshot(outside):
    """Every file under `outside` (and /etc/passwd): kind, mode and content hash."""
    state = {}
    for directory, dirnames, filenames in os.walk(outside):
        for name in dirnames + filenames:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            digest = ""
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            state[os.path.relpath(path, outside)] = (st.st_mode, digest)
    with open("/etc/passwd", "rb") as f:
        state["/etc/passwd"] = hashlib.sha256(f.read()).hexdigest()
    return state


def git(directory, *args):
    subprocess.run(["git", "-C", directory, "-c", "user.name=attacker", "-c", "user.email=a@example.invalid"] + list(args),
                   check=True, capture_output=True)


def booksync(bin_path, directory, args, env):
    """booksync run in `directory` as its working directory (no -C), output as bytes."""
    return Booksync(bin_path, env=env, timeout=COMMAND_TIMEOUT)(None, *args, cwd=directory, text=False)


def build_origin(bin_path, scratch, host, project, outside, marker, variant):
    """The attacker's repository for one variant; returns its path."""
    origin = os.path.join(scratch, "origin-" + variant)
    os.makedirs(origin)
    git(origin, "init", "-q")
    env = environment(host, scratch)
    result = booksync(bin_path, origin, ["init", "--firestore", project, "--collection", "books"], env)
    assert result.returncode == 0, result.stderr
    booksync(bin_path, origin, ["pull"], env)
    state = os.path.join(origin, ".booksync")
    # A program named by the collection itself: must never run.
    with open(os.path.join(state, "config.json")) as f:
        config = json.load(f)
    config.setdefault("remote", {})["tokenCommand"] = "touch %s; echo stolen" % marker
    # Descriptions that would clear the screen and hide code if printed raw (`schema --swift`, `--print`).
    config["schema"] = {"description": "\x1b[2J\x1b]0;owned\x07 \u202e gnp.exe", "required": [
        {"name": "title", "type": "string", "description": "\x1b[31mred\r\u2066hidden"}]}
    with open(os.path.join(state, "config.json"), "w") as f:
        json.dump(config, f)
    # Record files that point outside, and a name with terminal escapes.
    os.symlink("/etc/passwd", os.path.join(origin, "passwd.json"))
    os.symlink(os.path.join(outside, "target.json"), os.path.join(origin, "stolen.json"))
    with open(os.path.join(origin, "\x1b[2J\x1b]0;owned\x07.json"), "w") as f:
        f.write('{"id": "x"}\n')
    links = {
        "lock": (".booksync/lock", os.path.join(outside, "lockfile")),
        "index": (".booksync/index", os.path.join(outside, "target.json")),
        "pack": (".booksync/base/pack", os.path.join(outside, "bashrc")),
        "manifest": (".booksync/manifest.json", os.path.join(outside, "target.json")),
        "conflicts": (".booksync/conflicts", os.path.join(outside, "conf")),
    }
    if variant in links:
        relative, target = links[variant]
        path = os.path.join(origin, relative)
        if os.path.lexists(path):
            os.remove(path)
        os.symlink(target, path)
    elif variant == "state":
        shutil.move(state, os.path.join(outside, "state"))
        os.symlink(os.path.join(outside, "state"), state)
    git(origin, "add", "-A", "-f")
    git(origin, "commit", "-q", "-m", "a harmless-looking data repository")
    return origin


def environment(host, scratch, emulator=True):
    """The emulator with an access token set; or (emulator=False) the same server
    as a plain REST endpoint and no credentials in the environment, which is
    when a token command would be looked for."""
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BOOKSYNC_", "GOOGLE_", "XDG_", "FIRESTORE_", "CLOUDSDK_", "GCE_"))}
    env.update(HOME=home, BOOKSYNC_REQUEST_TIMEOUT="10", BOOKSYNC_RETRY_DEADLINE="20")
    if emulator:
        env.update(FIRESTORE_EMULATOR_HOST=host, BOOKSYNC_ACCESS_TOKEN=TOKEN)
    else:
        env.update(BOOKSYNC_FIRESTORE_URL="http://%s/v1/" % host, GCE_METADATA_HOST="127.0.0.1:9")
    env.pop("NO_COLOR", None)
    return env


def commands_without_credentials():
    return [["status"], ["pull"], ["-v", "push"]]


def commands(outside):
    hostile = HOSTILE_IDS[0]
    return [
        ["status"], ["status", "--short"], ["status", "--json"], ["status", "--offline"], ["--color", "always", "status"],
        ["-v", "status"], ["diff"], ["diff", "dune"], ["diff", hostile], ["validate"], ["validate", "passwd.json"],
        ["fmt", "--check"], ["fmt"], ["fmt", os.path.join(outside, "target.json")], ["fmt", "../outside/target.json"],
        ["schema"], ["schema", "--print"], ["schema", "--swift", "BookDTO"], ["schema", "--check"],
        ["pull"], ["pull", "--theirs"], ["resolve", "stolen", "--ours"], ["resolve", "dune", "--theirs"],
        ["push"], ["push", "--dry-run"], ["sync"], ["-v", "--color", "always", "sync"], ["status", "--exit-code"],
    ]


def check_output(label, result, color):
    problems = []
    if result.returncode not in (0, 1, 2, 3, 4):
        problems.append("%s: exit %d (crash or signal)" % (label, result.returncode))
    for stream_name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
        if TOKEN.encode() in data:
            problems.append("%s: the access token appears on %s" % (label, stream_name))
        text = SGR.sub(b"", data) if color else data
        bad = BAD_BYTES.search(text)
        if bad:
            start = max(0, bad.start() - 30)
            problems.append("%s: %s carries a control character: %r" % (label, stream_name, text[start:bad.end() + 10]))
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--variants", default="records,lock,index,pack,manifest,conflicts,state")
    options = parser.parse_args()
    options.bin = os.path.abspath(options.bin)
    passed = failed = 0
    with scratch_directory("hostile") as scratch:
        outside = os.path.join(scratch, "outside")
        os.makedirs(os.path.join(outside, "conf"))
        for name, text in (("bashrc", "PS1='$ '\n"), ("lockfile", "important\n"),
                           ("target.json", '{"id": "target", "title": "T", "author": "A", "genre": "g"}\n')):
            with open(os.path.join(outside, name), "w") as f:
                f.write(text)
        os.chmod(os.path.join(outside, "target.json"), 0o600)
        marker = os.path.join(scratch, "token-command-ran")
        title_marker = os.path.join(scratch, "title-ran")
        for variant in options.variants.split(","):
            project = "hostile-%s-%s" % (variant, uuid.uuid4().hex[:8])
            seed_remote(options.host, project, title_marker)
            origin = build_origin(options.bin, scratch, options.host, project, outside, marker, variant)
            clone = os.path.join(scratch, "clone-" + variant)
            subprocess.run(["git", "clone", "-q", origin, clone], check=True, capture_output=True)
            os.mkfifo(os.path.join(clone, "fifo.json"))
            before = snapshot(outside)
            runs = [(environment(options.host, scratch), args) for args in commands(outside)]
            runs += [(environment(options.host, scratch, emulator=False), args) for args in commands_without_credentials()]
            for env, args in runs:
                label = "%s: booksync %s" % (variant, " ".join(repr(a) if not a.isprintable() else a for a in args))
                try:
                    result = booksync(options.bin, clone, args, env)
                except subprocess.TimeoutExpired:
                    print("FAIL %s: still running after %d s" % (label, COMMAND_TIMEOUT))
                    failed += 1
                    continue
                problems = check_output(label, result, color="always" in args)
                # The attack must have been met, not sidestepped by an unrelated failure:
                # a planted state link is refused (exit 4, naming the link); in the
                # records variant the hostile data is worked on (exit 0 or 1), except
                # for the paths outside, which are usage errors, and the runs without credentials.
                if variant != "records":
                    if result.returncode != 4 or b"symbolic link" not in result.stderr:
                        problems.append("%s: expected a refusal of the planted link (exit 4), got exit %d: %r"
                                        % (label, result.returncode, result.stderr[-200:]))
                elif "BOOKSYNC_ACCESS_TOKEN" in env:
                    expected = (2,) if any("outside" in a for a in args) else (0, 1)
                    if result.returncode not in expected:
                        problems.append("%s: expected exit %s, got %d: %r" % (label, expected, result.returncode, result.stderr[-300:]))
                after = snapshot(outside)
                if after != before:
                    changed = sorted(k for k in set(after) | set(before) if after.get(k) != before.get(k))
                    problems.append("%s: changed outside the clone: %s" % (label, ", ".join(changed)))
                    before = after
                for path, what in ((marker, "the committed tokenCommand ran"), (title_marker, "a remote title ran as a command")):
                    if os.path.exists(path):
                        problems.append("%s: %s" % (label, what))
                        os.remove(path)
                if variant in ("records", "conflicts", "index") and not os.path.isfile(os.path.join(clone, "passwd.json")) \
                        and not os.path.islink(os.path.join(clone, "passwd.json")):
                    problems.append("%s: the planted passwd.json link was removed" % label)
                for problem in problems:
                    print("FAIL " + problem)
                if problems:
                    failed += 1
                else:
                    passed += 1
        print("hostile clone: %d variants, %d commands each" % (len(options.variants.split(",")),
                                                               len(commands(outside)) + len(commands_without_credentials())))
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
