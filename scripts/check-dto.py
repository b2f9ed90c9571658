#!/usr/bin/env python3
"""A DTO from `booksync schema --swift` compiled as an app would, round-tripping every demo record (<doc:SwiftLibrary>).

Usage: check-dto.py --bin BOOKSYNC [--build DIR]   (DIR: the debug build, default beside BOOKSYNC)

The demo catalogue (fixtures/demo/books) is copied into a collection whose
schema declares every field it uses (fixtures/dto/demo-schema.json, strict:
an undeclared field would make a record invalid). `booksync schema --swift
DemoBookDTO` prints the DTO; it is compiled with a small program as a module
outside this package (`swiftc`, Swift 6, against the debug build's modules and
objects, so `package` symbols are invisible, as in an app). The program reads
every record through `RecordStore<DemoBookDTO>` (RecordDecoder) and saves it
back (RecordEncoder): every file must come out byte for byte as `booksync fmt`
left it, and the program reports how many records it saved. Then a schema
of field names that collide or clash in Swift (fixtures/dto/names-schema.json:
keywords, names equal but for case or punctuation, map fields named like the
types a DTO uses) must give a DTO that type-checks. Prints one line
per failed check and "N passed, M failed".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from harness.booksync import REPOSITORY, Booksync
from harness.checks import Checks
from harness.scratch import scratch

MODULES = ["BooksyncCore", "BooksyncKit", "BooksyncCodable", "BooksyncStore", "BooksyncURLSession"]

PROGRAM = """
import Foundation
import BooksyncStore

let store = RecordStore<DemoBookDTO>.firestore(directory: CommandLine.arguments[1])
var saved = 0
for book in try await store.all() {
    _ = try await store.save(book)
    saved += 1
}
print("saved \\(saved)")
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--build")
    options = parser.parse_args()
    binary = os.path.abspath(options.bin)
    build = os.path.abspath(options.build or os.path.dirname(binary))
    checks = Checks()
    check = checks.check

    booksync = Booksync(binary, timeout=60)
    with scratch("dto") as work:
        root = os.path.join(work, "books")
        shutil.copytree(os.path.join(REPOSITORY, "fixtures", "demo", "books"), root)

        def run(*args):
            return booksync(root, *args)
        result = run("-q", "init", "--firestore", "demo-dto", "--collection", "books")
        check(result.returncode == 0, "init: " + result.stderr)
        config_path = os.path.join(root, ".booksync", "config.json")
        with open(config_path) as f:
            config = json.load(f)
        with open(os.path.join(REPOSITORY, "fixtures", "dto", "demo-schema.json")) as f:
            config["schema"] = json.load(f)
        with open(config_path, "w") as f:
            json.dump(config, f)
        result = run("validate")
        check(result.returncode == 0, "the demo records are valid under the complete schema: " + result.stdout + result.stderr)
        run("-q", "fmt")
        source = run("schema", "--swift", "DemoBookDTO")
        check(source.returncode == 0, "schema --swift: " + source.stderr)
        with open(os.path.join(work, "DemoBookDTO.swift"), "w") as f:
            f.write(source.stdout)
        with open(os.path.join(work, "main.swift"), "w") as f:
            f.write(PROGRAM)
        # The objects of the modules' current sources (SwiftPM's map; stale objects of removed files stay in the folder).
        objects = []
        for module in MODULES:
            with open(os.path.join(build, module + ".build", "output-file-map.json")) as f:
                mapping = json.load(f)
            objects += [entry["object"] for source, entry in mapping.items() if source and "object" in entry]
        program = os.path.join(work, "roundtrip")
        compiled = subprocess.run(["swiftc", "-swift-version", "6", "-module-name", "DemoApp", "-I", os.path.join(build, "Modules"),
                                   os.path.join(work, "main.swift"), os.path.join(work, "DemoBookDTO.swift"), *objects, "-o", program],
                                  capture_output=True, text=True, timeout=300)
        if not check(compiled.returncode == 0, "the generated DTO does not compile outside the package:\n" + compiled.stderr[-3000:]):
            return 1
        names = sorted(n for n in os.listdir(root) if n.endswith(".json"))
        before = {n: open(os.path.join(root, n), "rb").read() for n in names}
        result = subprocess.run([program, root], capture_output=True, text=True, timeout=120)
        check(result.returncode == 0 and result.stdout.strip() == "saved %d" % len(names),
              "the round trip: %r %r (expected saved %d)" % (result.stdout, result.stderr[-2000:], len(names)))
        for name in names:
            after = open(os.path.join(root, name), "rb").read()
            check(after == before[name], "%s changed in the round trip:\n%s\n---\n%s" % (name, before[name].decode(), after.decode()))
        print("%d demo records round-tripped through DemoBookDTO (%d lines of generated Swift)" % (len(names), source.stdout.count("\n")))
        # Field names that collide or clash in Swift: the DTO still compiles.
        config["schema"] = json.load(open(os.path.join(REPOSITORY, "fixtures", "dto", "names-schema.json")))
        with open(config_path, "w") as f:
            json.dump(config, f)
        source = run("schema", "--swift", "NamesDTO")
        check(source.returncode == 0, "schema --swift NamesDTO: " + source.stderr)
        with open(os.path.join(work, "NamesDTO.swift"), "w") as f:
            f.write(source.stdout)
        compiled = subprocess.run(["swiftc", "-typecheck", "-swift-version", "6", "-I", os.path.join(build, "Modules"),
                                   os.path.join(work, "NamesDTO.swift")], capture_output=True, text=True, timeout=300)
        check(compiled.returncode == 0, "the DTO of fixtures/dto/names-schema.json does not compile:\n%s\n%s" % (compiled.stderr[-3000:], source.stdout))
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
