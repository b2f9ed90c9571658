#!/usr/bin/env python3
"""Runs every CLI transcript of the docs and fails when what booksync prints differs.

A transcript is a fenced block of README.md or of a DocC article (those of
the manual, Sources/booksync/booksync.docc, and of the other two catalogs)
with lines that start with `$ booksync`. Each has a setup script, fixtures/transcripts/DOC-N.sh (DOC the
file's name without .md, N the transcript's number in it, from 1), that builds
the collection and the emulator's documents the transcript starts from. The
setup may define `before_K` (K from 1), run just before the K-th command: the
"meanwhile" of the story (an app's write, an editor's save).

Each command runs in the setup's directory with the built booksync; its
stdout and stderr, together, must contain the lines the transcript shows
below it as one contiguous run, in order (a transcript may show an excerpt;
no lines shown means nothing is checked but the exit code). A command must
exit 0 unless the transcript shows `(exit N)`, which it then must match.
Before comparing, durations (`7 ms`) become `N ms` on both sides, and the
emulator's real address is written as the transcript's `127.0.0.1:8080`.

Usage:
  scripts/check-transcripts.py --bin PATH/booksync --host HOST:PORT [--second-host HOST:PORT]
  scripts/check-transcripts.py ... --self-test   prove a changed transcript line is caught
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

from harness.doc_blocks import DOCS, ROOT, blocks

SETUPS = os.path.join(ROOT, "fixtures", "transcripts")
DOC_HOST = "127.0.0.1:8080"
MARK = "@@transcript-command@@"

# What every setup and command can use: the binary, a REST write as an app
# makes it, and a clean project on the emulator.
HELPERS = r'''
booksync() { "$BOOKSYNC_BIN" "$@"; }
# app_set PROJECT COLLECTION ID FIELD VALUE-JSON: one field of a document, as an app's update does.
app_set() {
  local mask="${4%%.*}" fields
  fields="$(python3 -c 'import json,sys; path=sys.argv[1].split("."); v=json.loads(sys.argv[2])
for key in reversed(path[1:]): v={"mapValue":{"fields":{key:v}}}
print(json.dumps({path[0]: v}))' "$4" "$5")"
  curl -sf -o /dev/null -X POST "http://$FIRESTORE_EMULATOR_HOST/v1/projects/$1/databases/(default)/documents:commit" \
    -H 'Authorization: Bearer owner' -H 'Content-Type: application/json' \
    -d "{\"writes\": [{\"update\": {\"name\": \"projects/$1/databases/(default)/documents/$2/$3\", \"fields\": $fields}, \"updateMask\": {\"fieldPaths\": [\"$4\"]}}]}"
}
# clear_project PROJECT [HOST]: the emulator forgets every document of PROJECT.
clear_project() {
  curl -sf -o /dev/null -X DELETE "http://${2:-$FIRESTORE_EMULATOR_HOST}/emulator/v1/projects/$1/databases/(default)/documents"
}
# book ID [EXTRA-JSON-FIELDS]: a record file of the Book schema.
book() {
  printf '{\n  "id": "%s",\n  "title": "%s",\n  "author": "A. Author",\n  "genre": "fiction"%s\n}\n' "$1" "$1" "${2:+,
  $2}" > "$1.json"
}
'''


def transcripts(path):
    """(number, line, commands) per transcript; commands are (command, shown lines, exit code)."""
    found = []
    for _, first_line, lines in blocks(path):
        if not any(line.startswith("$ booksync") for line in lines):
            continue
        commands = []
        for line in lines:
            if line.startswith("$ "):
                command = re.sub(r"\s{2,}#.*$", "", line[2:]).strip()
                commands.append([command, [], 0])
            elif commands:
                exit_match = re.fullmatch(r"\(exit (\d+)\)", line.strip())
                if exit_match:
                    commands[-1][2] = int(exit_match.group(1))
                elif line.strip() or commands[-1][1]:
                    commands[-1][1].append(line)
        for command in commands:  # trailing blank lines belong to no output
            while command[1] and not command[1][-1].strip():
                command[1].pop()
        found.append((len(found) + 1, first_line, commands))
    return found


def normalize(text, host):
    text = text.replace(host, DOC_HOST)
    return re.sub(r"\b\d+ ms\b", "N ms", text)


def contains_run(actual, shown):
    if not shown:
        return True
    for start in range(len(actual) - len(shown) + 1):
        if actual[start:start + len(shown)] == shown:
            return True
    return False


def run(doc, number, commands, args):
    """The problems of one transcript, as sentences."""
    name = os.path.splitext(os.path.basename(doc))[0]
    setup = os.path.join(SETUPS, f"{name}-{number}.sh")
    if not os.path.exists(setup):
        return [f"{doc}: transcript {number} has no setup ({os.path.relpath(setup, ROOT)})"]
    with tempfile.TemporaryDirectory() as scratch:
        script = ["set -euo pipefail", HELPERS, f"cd {scratch!r}", f"source {setup!r}", "set +e"]
        for index, (command, _, _) in enumerate(commands, 1):
            script.append(f"if declare -F before_{index} >/dev/null; then before_{index} >/dev/null 2>&1 || "
                          f"{{ echo 'before_{index} failed' >&2; exit 90; }}; fi")
            script.append(f"echo '{MARK}'; {command.replace(DOC_HOST, args.host)} 2>&1; echo \"{MARK} $?\"")
        environment = dict(os.environ, BOOKSYNC_BIN=args.bin, FIRESTORE_EMULATOR_HOST=args.host, NO_COLOR="1",
                           SECOND_EMULATOR_HOST=args.second_host or "", REPO=ROOT)
        environment.pop("BOOKSYNC_FIRESTORE_URL", None)
        result = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True, env=environment,
                                timeout=300)
    if result.returncode != 0:
        return [f"{doc}: transcript {number}: the setup failed (exit {result.returncode}): {result.stderr.strip()[-800:]}"]
    parts = normalize(result.stdout, args.host).split(MARK + "\n")[1:]
    problems = []
    for (command, shown, code), part in zip(commands, parts):
        body, _, status = part.rpartition(MARK + " ")
        actual = body.splitlines()
        if int(status.strip() or -1) != code:
            problems.append(f"{doc}: transcript {number}: '$ {command}' exited {status.strip()}, the doc says {code}:\n"
                            + body)
        elif not contains_run(actual, [normalize(line, args.host) for line in shown]):
            problems.append(f"{doc}: transcript {number}: '$ {command}' printed:\n{body}which does not contain, "
                            f"as shown:\n" + "\n".join(shown))
    if len(parts) != len(commands):
        problems.append(f"{doc}: transcript {number}: {len(parts)} of {len(commands)} commands ran")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--second-host")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    found = [(doc, number, line, commands) for doc in DOCS for number, line, commands in transcripts(doc)]
    if args.self_test:
        doc, number, _, commands = next((d, n, l, c) for d, n, l, c in found if any(shown for _, shown, _ in c))
        changed = [[command, list(shown), code] for command, shown, code in commands]
        victim = next(c for c in changed if c[1])
        victim[1][-1] += " (changed)"
        if not run(doc, number, changed, args):
            print("self-test failed: a changed transcript line was not reported", file=sys.stderr)
            return 1
        print(f"self-test passed: a changed line of {doc} transcript {number} was reported")
        return 0
    problems = []
    for doc, number, _, commands in found:
        problems += run(doc, number, commands, args)
    names = {f"{os.path.splitext(os.path.basename(d))[0]}-{n}.sh" for d, n, _, _ in found}
    for setup in sorted(glob.glob(os.path.join(SETUPS, "*.sh"))):
        if os.path.basename(setup) not in names:
            problems.append(f"{os.path.relpath(setup, ROOT)} belongs to no transcript of the docs")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"{len(found)} transcripts ({sum(len(c) for _, _, _, c in found)} commands) print what the docs show")
    return 0


if __name__ == "__main__":
    sys.exit(main())
