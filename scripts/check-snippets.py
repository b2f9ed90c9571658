#!/usr/bin/env python3
"""Type-checks every Swift snippet of the docs, and the example app, as an app outside the package.

Every ```swift block of README.md and of the DocC articles (of the three
catalogs: harness.doc_blocks lists them) is a whole program: it imports
what it uses and declares what it needs, so a reader can paste it. Each is
type-checked on its own as the main.swift of a module outside this package
(`swiftc -typecheck`, Swift 6, against the modules of the debug build), and so
is Sources/bookshelf-example. Outside the package, `package` symbols are
invisible: a snippet or the example that needs one fails, as an app would.

Usage:
  scripts/check-snippets.py [--modules DIR]   default: the debug build's Modules folder
  scripts/check-snippets.py --self-test       prove it fails on a snippet that uses a package symbol
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

from harness.doc_blocks import DOCS, ROOT, blocks

EXAMPLE = os.path.join(ROOT, "Sources", "bookshelf-example")


def snippets(path):
    """(line, code) of each ```swift block."""
    return [(line, "\n".join(lines) + "\n") for language, line, lines in blocks(path) if language == "swift"]


def typecheck(files, modules):
    """swiftc's complaints, or "" when the files type-check as a module outside the package."""
    result = subprocess.run(["swiftc", "-typecheck", "-swift-version", "6", "-I", modules] + files,
                            capture_output=True, text=True)
    return "" if result.returncode == 0 else (result.stderr or result.stdout)


def check_snippet(code, modules):
    with tempfile.TemporaryDirectory() as scratch:
        main = os.path.join(scratch, "main.swift")
        with open(main, "w") as f:
            f.write(code)
        return typecheck([main], modules)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", default=None)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    modules = args.modules
    if modules is None:
        bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout.strip()
        modules = os.path.join(bin_path, "Modules")
    if args.self_test:
        # FileSystem is a package type of BooksyncKit: an app cannot see it.
        bad = "import BooksyncStore\nprint(FileSystem.exists(\"x\"))\n"
        good = "import BooksyncStore\nprint(try RecordID(\"dune\").fileName)\n"
        if not check_snippet(bad, modules):
            print("self-test failed: a snippet using a package symbol type-checked", file=sys.stderr)
            return 1
        if check_snippet(good, modules):
            print("self-test failed: a snippet using only public symbols did not type-check", file=sys.stderr)
            return 1
        print("self-test passed: a package symbol is refused, a public one accepted")
        return 0
    failures, count = 0, 0
    for path in DOCS:
        for line, code in snippets(path):
            count += 1
            complaint = check_snippet(code, modules)
            if complaint:
                failures += 1
                print(f"{path}:{line}: this Swift snippet does not compile as an app's code:\n{complaint}", file=sys.stderr)
    example_files = sorted(glob.glob(os.path.join(EXAMPLE, "*.swift")))
    complaint = typecheck(example_files, modules)
    if complaint:
        failures += 1
        print(f"{os.path.relpath(EXAMPLE, ROOT)} does not compile as an app outside the package:\n{complaint}",
              file=sys.stderr)
    if failures:
        return 1
    print(f"{count} Swift snippets of the docs and the example app ({len(example_files)} files) "
          f"type-check as an app's code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
