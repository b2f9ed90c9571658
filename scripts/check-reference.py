#!/usr/bin/env python3
"""The two references people read instead of the code, against the code:
the synopsis of the commands and the map of the folders.

  check-reference.py --bin PATH/booksync
  check-reference.py --bin PATH/booksync --self-test   prove each check can fail

The synopsis. Each command declares its usage lines once (the CLI's
Arguments/), and `booksync COMMAND --help` prints them. The synopsis blocks
of the manual's Commands article and of README.md are written by hand, with
descriptions, so they are checked rather than generated: every command of
`booksync help` has a line in each; every option a line names is one the
command's usage declares; and in the Commands article, the complete
reference, every option the usage declares is on one of the command's lines.
`[init options]` on clone's line stands for init's options, `[same flags]`
on sync's for sync's own.

The map. Every folder under Sources/ that holds Swift files or a catalog is
on the Architecture article's code-layout map, and every folder on the map
exists.
"""
import argparse
import os
import re
import subprocess
import sys

from harness.booksync import REPOSITORY
from harness.checks import Checks
from harness.doc_blocks import blocks

COMMANDS_ARTICLE = "Sources/booksync/booksync.docc/Commands.md"
ARCHITECTURE = "Sources/BooksyncPackage.docc/Architecture.md"
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
GLOBAL = {"-C", "--color", "--no-color", "--progress", "-q", "--quiet", "-v", "--verbose", "-h", "--help", "--version"}
# Words on a synopsis line that stand for another command's options.
STANDS_FOR = {"[init options]": "init", "[same flags]": "sync"}


def run(binary, *args):
    return subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=60).stdout


def commands(binary):
    """The commands `booksync help` lists."""
    text = run(binary, "help")
    listing = text.split("commands:", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def usage_options(binary, command):
    """The options of a command's declared usage lines (`booksync COMMAND --help`)."""
    text = run(binary, command, "--help")
    usage = text.split("\n\n", 1)[0]
    return set(OPTION.findall(usage)) - GLOBAL


def synopsis(lines):
    """{command: [syntax of each of its lines]} of a block's `booksync COMMAND …`
    lines, the description after two spaces cut off, continuation lines joined."""
    found = {}
    last = None
    for line in lines:
        if line.startswith("booksync "):
            syntax = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
            last = syntax.split()[1]
            found.setdefault(last, []).append(syntax)
        elif last and line.startswith(" ") and line.strip().startswith("["):
            found[last][-1] += " " + re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        else:
            last = None
    return found


def synopsis_block(path):
    """The synopsis of the doc at `path`: its block with the most `booksync` lines."""
    best = {}
    for _, _, lines in blocks(path):
        found = synopsis(lines)
        if sum(map(len, found.values())) > sum(map(len, best.values())):
            best = found
    return best


def check_synopsis(check, where, found, listed, options, complete):
    for command in listed:
        check(command in found, "%s: no synopsis line for '%s'" % (where, command))
    for command, lines in sorted(found.items()):
        if command == "help":
            continue
        if not check(command in options, "%s: '%s' is not a command" % (where, command)):
            continue
        named = set()
        for line in lines:
            named |= set(OPTION.findall(line)) - GLOBAL
            for words, other in STANDS_FOR.items():
                if words in line:
                    named |= options[other]
        for option in sorted(named - options[command]):
            check(False, "%s: '%s' names %s, which its usage does not declare" % (where, command, option))
        if complete:
            for option in sorted(options[command] - named):
                check(False, "%s: '%s' declares %s, which no synopsis line shows" % (where, command, option))


def source_folders():
    """Sources/X and the folders below it that hold Swift files or are a catalog, as the map names them."""
    found = set()
    sources = os.path.join(REPOSITORY, "Sources")
    for module in os.listdir(sources):
        top = os.path.join(sources, module)
        if not os.path.isdir(top):
            continue
        found.add("Sources/" + module)
        for directory, subdirectories, files in os.walk(top):
            relative = os.path.relpath(directory, top)
            if relative == ".":
                continue
            if relative.endswith(".docc"):
                found.add("Sources/%s/%s" % (module, relative))
                subdirectories[:] = []
            elif any(name.endswith(".swift") for name in files):
                found.add("Sources/%s/%s" % (module, relative))
    return found


def mapped_folders(lines):
    """The Sources folders of the code-layout map: `Sources/X` lines, and `Name/`
    lines under them, two spaces of indentation a level."""
    found = set()
    stack = []
    for line in lines:
        word = line.split()[0] if line.strip() else ""
        indent = len(line) - len(line.lstrip(" "))
        if line.startswith("Sources/"):
            stack = [word.rstrip("/")]
            found.add(stack[0])
        elif stack and indent in (2, 4, 6) and word.endswith("/") and indent // 2 <= len(stack):
            stack = stack[:indent // 2] + [word.rstrip("/")]
            found.add("/".join(stack))
        elif not line.startswith(" "):
            stack = []
    return found


def layout_map():
    for _, _, lines in blocks(ARCHITECTURE):
        if any(line.startswith("Sources/BooksyncCore") for line in lines):
            return lines
    return []


def check_layout(check, mapped, folders):
    for folder in sorted(folders - mapped):
        check(False, "%s: the code-layout map does not show %s" % (ARCHITECTURE, folder))
    for folder in sorted(mapped - folders):
        check(False, "%s: the code-layout map shows %s, which does not exist" % (ARCHITECTURE, folder))
    check(bool(mapped & folders), "%s: no code-layout map found" % ARCHITECTURE)


def self_test(binary):
    """Each check fails on the drift it is for."""
    listed = commands(binary)
    options = {command: usage_options(binary, command) for command in listed}
    cases = [
        ("a missing command", {"pull": ["booksync pull [PATHSPEC...]"]}, False, "no synopsis line for 'push'"),
        ("an option the usage lacks", {"watch": ["booksync watch --no-such-flag"]}, False, "names --no-such-flag"),
        ("an option the synopsis lacks", {"watch": ["booksync watch [--remote NAME]"]}, True, "declares --no-sync"),
    ]
    ok = True

    def recorder(printed):
        def check(condition, message):
            if not condition:
                printed.append(message)
            return condition
        return check

    for what, found, complete, expected in cases:
        printed = []
        check_synopsis(recorder(printed), "test", found, listed, options, complete)
        if not any(expected in message for message in printed):
            print("self-test: %s was not caught (expected '%s')" % (what, expected))
            ok = False
    printed = []
    check_layout(recorder(printed), mapped_folders(layout_map()) - {"Sources/BooksyncKit/Engine/Gather"}, source_folders())
    if not any("does not show Sources/BooksyncKit/Engine/Gather" in message for message in printed):
        print("self-test: a folder missing from the map was not caught")
        ok = False
    print("self-test: %s" % ("every drift caught" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--self-test", action="store_true")
    options = parser.parse_args()
    if options.self_test:
        return self_test(options.bin)
    checks = Checks()
    listed = commands(options.bin)
    declared = {command: usage_options(options.bin, command) for command in listed}
    for path, complete in [(COMMANDS_ARTICLE, True), ("README.md", False)]:
        found = synopsis_block(path)
        check_synopsis(checks.check, path, found, listed, declared, complete)
    check_layout(checks.check, mapped_folders(layout_map()), source_folders())
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
