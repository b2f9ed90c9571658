#!/usr/bin/env python3
"""scripts/docs' helpers for the three DocC catalogs: the contributor catalog's symbol graph, and the links between them.

booksync has three catalogs: the library's (Sources/BooksyncStore/BooksyncStore.docc,
over the public symbols), the manual (Sources/booksync/booksync.docc, articles
only) and the contributor catalog (Sources/BooksyncPackage.docc, over the
package-level symbols). DocC links only within a catalog.

`merge`: DocC documents one module per catalog; given the graphs of several
modules, one `docc convert` makes several roots and renders no article. So the
graphs of the contributor catalog's modules, made by `swift-symbolgraph-extract
-minimum-access-level package`, are merged into one module, BooksyncPackage:
the symbols and relationships of MODULE.symbols.json and of
MODULE@OTHER.symbols.json where OTHER is merged too (Kit's extensions of Core's
types are members like any other) go into BooksyncPackage.symbols.json, the
extensions of other modules' types (Swift's) into BooksyncPackage@OTHER. Each
doc comment written in one of those modules is moved into BooksyncPackage
too: DocC checks the parameter lists (a `- Parameters:` that misses one, or
names one the declaration does not have) only of comments written in the
module it documents. Comments inherited from Swift's (Equatable's `==`) stay
Swift's.

`check` fails on
- a `<doc:` in a Swift file under Sources/ outside every doc comment of the
  given graphs: no catalog builds that comment, so a broken link would go
  unnoticed (name the article in plain text there instead);
- an article named in plain text, in a Swift file or an article, that its
  catalog does not have: "the manual's X article", "the manual's X and Y
  articles", "the library's X article", "the contributor docs' X article",
  or "the X article" (X capitalised: any catalog);
- a `<doc:X>` in a test or a script (in no catalog, so never resolved: a
  name for people) where no catalog has an article X.

Usage:
  scripts/catalogs.py merge --modules M1,M2,... --from DIR --to DIR
  scripts/catalogs.py check GRAPH-DIR...
  scripts/catalogs.py --self-test   prove `check` fails on an unbuilt link and a wrong name, and `merge` merges
"""
import argparse
import bisect
import glob
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = "BooksyncPackage"
SUFFIX = ".symbols.json"
CATALOGS = {"manual's": "Sources/booksync/booksync.docc",
            "library's": "Sources/BooksyncStore/BooksyncStore.docc",
            "contributor docs'": "Sources/BooksyncPackage.docc"}
# "the manual's X article", "the manual's X and Y articles", "the X article"; a
# Swift comment's line break (`\n    /// `) counts as a space.
NAMED = re.compile(r"\bthe (?:(manual's|library's|contributor docs')\s+)?([A-Z]\w+)(?:\s+and\s+([A-Z]\w+))?\s+articles?\b")
COMMENT_BREAK = re.compile(r"\n[ \t]*//+[ \t]?")


def merge(modules, source, destination, name=MODULE):
    """Writes name.symbols.json (and name@OTHER.symbols.json) into destination from the graphs of modules in source."""
    main = None
    extensions = {}
    for path in sorted(glob.glob(os.path.join(source, "*" + SUFFIX))):
        owner, _, extended = os.path.basename(path)[:-len(SUFFIX)].partition("@")
        if owner not in modules:
            continue
        with open(path) as f:
            graph = json.load(f)
        if not extended or extended in modules:
            if main is None:
                main = {"metadata": graph["metadata"], "module": dict(graph["module"], name=name),
                        "symbols": [], "relationships": []}
            target = main
        else:
            target = extensions.setdefault(extended, {"metadata": graph["metadata"],
                                                      "module": dict(graph["module"], name=name),
                                                      "symbols": [], "relationships": []})
        for symbol in graph["symbols"]:
            # Only booksync's own comments: one inherited from Swift's
            # (Equatable's ==) stays Swift's, its parameter names unchecked.
            if symbol.get("docComment", {}).get("module") in modules:
                symbol["docComment"]["module"] = name
        target["symbols"] += graph["symbols"]
        target["relationships"] += graph["relationships"]
    missing = [m for m in modules if not os.path.exists(os.path.join(source, m + SUFFIX))]
    if missing or main is None:
        sys.exit(f"catalogs.py: no graph of {', '.join(missing or modules)} in {source}")
    os.makedirs(destination, exist_ok=True)
    with open(os.path.join(destination, name + SUFFIX), "w") as f:
        json.dump(main, f)
    for extended, graph in sorted(extensions.items()):
        with open(os.path.join(destination, f"{name}@{extended}{SUFFIX}"), "w") as f:
            json.dump(graph, f)
    return len(main["symbols"])


def built_lines(graph_dirs):
    """{real path: set of 1-based line numbers} of every doc comment line in the graphs."""
    lines = {}
    for directory in graph_dirs:
        for path in glob.glob(os.path.join(directory, "*" + SUFFIX)):
            with open(path) as f:
                graph = json.load(f)
            for symbol in graph["symbols"]:
                comment = symbol.get("docComment") or {}
                uri = comment.get("uri", "")
                if not uri.startswith("file://"):
                    continue
                source = os.path.realpath(uri[len("file://"):])
                for line in comment.get("lines", []):
                    if "range" in line:
                        lines.setdefault(source, set()).add(line["range"]["start"]["line"] + 1)
    return lines


def unbuilt_links(root, graph_dirs):
    """`file:line: ...` for each <doc:> link of a Swift file under root/Sources that no graph's doc comment holds."""
    built = built_lines(graph_dirs)
    problems = []
    for path in sorted(glob.glob(os.path.join(root, "Sources", "**", "*.swift"), recursive=True)):
        real = os.path.realpath(path)
        with open(path) as f:
            for number, line in enumerate(f, 1):
                for link in re.findall(r"<doc:[^>\s]*>?", line):
                    if number not in built.get(real, ()):
                        problems.append(f"{os.path.relpath(path, root)}:{number}: {link} is in a comment no catalog builds")
    return problems


def wrong_names(root):
    """`file:line: ...` for each article named in plain text that its catalog does not have."""
    articles = {owner: {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(root, folder, "*.md"))}
                for owner, folder in CATALOGS.items()}
    everywhere = set().union(*articles.values())
    problems = []
    files = glob.glob(os.path.join(root, "Sources", "**", "*.swift"), recursive=True) + \
        glob.glob(os.path.join(root, "Sources", "**", "*.docc", "*.md"), recursive=True)
    for path in sorted(files):
        with open(path) as f:
            text = f.read()
        searched, line_at = joined_comments(text) if path.endswith(".swift") else (text, None)
        for match in NAMED.finditer(searched):
            owner = match.group(1)
            known = articles[owner] if owner else everywhere
            for name in filter(None, (match.group(2), match.group(3))):
                if name not in known:
                    line = line_at(match.start()) if line_at else text.count("\n", 0, match.start()) + 1
                    where = CATALOGS[owner] if owner else "any catalog"
                    problems.append(f"{os.path.relpath(path, root)}:{line}: \"{match.group(0)}\" names no article of {where}")
    # Tests and scripts are in no catalog: their <doc:X> is a name for people, never resolved by DocC.
    others = glob.glob(os.path.join(root, "Tests", "**", "*.swift"), recursive=True) + \
        glob.glob(os.path.join(root, "scripts", "**", "*.py"), recursive=True)
    for path in sorted(others):
        if os.path.basename(path) == "catalogs.py":  # this file: its <doc:X> are examples
            continue
        with open(path) as f:
            for number, line in enumerate(f, 1):
                for name in re.findall(r"<doc:(\w+)", line):
                    if name not in everywhere:
                        problems.append(f"{os.path.relpath(path, root)}:{number}: <doc:{name}> names no article of any catalog")
    return problems


def joined_comments(text):
    """text with each comment line break (`\n    /// `) made one space, and the line in text of an offset in it."""
    starts = []  # (offset in the joined text, line in text) of each piece
    pieces = []
    offset, line, previous = 0, 1, 0
    for match in COMMENT_BREAK.finditer(text):
        piece = text[previous:match.start()]
        starts.append((offset, line))
        pieces.append(piece + " ")
        offset += len(piece) + 1
        line += piece.count("\n") + 1
        previous = match.end()
    starts.append((offset, line))
    pieces.append(text[previous:])
    joined = "".join(pieces)

    def line_at(position):
        index = bisect.bisect_right([start for start, _ in starts], position) - 1
        start, first = starts[index]
        return first + joined.count("\n", start, position)
    return joined, line_at


def check(root, graph_dirs):
    return unbuilt_links(root, graph_dirs) + wrong_names(root)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def self_test():
    with tempfile.TemporaryDirectory() as root:
        swift = os.path.join(root, "Sources", "M", "A.swift")
        write(swift, "/// Built: see <doc:Architecture>.\npackage struct A {}\n"
                     "/// Not built: see <doc:Safety>.\nstruct B {}\n"
                     "/// Named: the manual's Safety article, the contributor docs'\n"
                     "/// Benchmarks article; wrongly: the manual's Safety and\n/// Benchmarks articles.\nstruct C {}\n")
        write(os.path.join(root, CATALOGS["manual's"], "Safety.md"), "# Safety\n\nSee the Testing article.\n")
        write(os.path.join(root, CATALOGS["contributor docs'"], "Benchmarks.md"), "# Benchmarks\n\nSee the Tests article.\n")
        write(os.path.join(root, "Tests", "T.swift"), "/// See <doc:Safety> and <doc:Sefety>.\n")
        graphs = os.path.join(root, "graphs")
        symbol = {"docComment": {"uri": "file://" + swift,
                                 "lines": [{"range": {"start": {"line": 0, "character": 4}}, "text": ""}]}}
        write(os.path.join(graphs, "M" + SUFFIX),
              json.dumps({"metadata": {}, "module": {"name": "M"}, "symbols": [symbol], "relationships": []}))
        problems = check(root, [graphs])
        expected = [("A.swift:3:", "<doc:Safety>"), ("A.swift:6:", "the manual's Safety and"),
                    ("Benchmarks.md:3:", "the Tests article"), ("Safety.md:3:", "the Testing article"),
                    ("T.swift:1:", "<doc:Sefety>")]
        if len(problems) != len(expected) or not all(any(a in p and b in p for p in problems) for a, b in expected):
            sys.exit("self-test FAILED: expected problems at " + ", ".join(a + " " + b for a, b in expected) +
                     "; got:\n" + "\n".join(problems))
        merged = os.path.join(root, "merged")
        for name in ("M", "N", "N@M", "N@Swift", "O"):
            write(os.path.join(graphs, name + SUFFIX),
                  json.dumps({"metadata": {}, "module": {"name": name.split("@")[0]},
                              "symbols": [{"n": name, "docComment": {"module": name.split("@")[0], "lines": []}},
                                          {"n": name + " inherited", "docComment": {"module": "Swift", "lines": []}}],
                              "relationships": []}))
        merge(["M", "N"], graphs, merged, name="P")
        with open(os.path.join(merged, "P" + SUFFIX)) as f:
            main = json.load(f)
        own = [s for s in main["symbols"] if not s["n"].endswith(" inherited")]
        if sorted(s["n"] for s in own) != ["M", "N", "N@M"] or main["module"]["name"] != "P" \
                or any(s["docComment"]["module"] != ("P" if s in own else "Swift") for s in main["symbols"]) \
                or sorted(os.listdir(merged)) != ["P" + SUFFIX, "P@Swift" + SUFFIX]:
            sys.exit(f"self-test FAILED: merge made {sorted(os.listdir(merged))} with {main['symbols']}")
    print("self-test passed: a <doc:> link no catalog builds and a wrongly named article fail; "
          "M, N and N@M merge into one module with their own doc comments (not Swift's), N@Swift stays an extension graph")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    merging = commands.add_parser("merge", help="merge per-module graphs into one module, BooksyncPackage")
    merging.add_argument("--modules", required=True, help="comma-separated module names")
    merging.add_argument("--from", dest="source", required=True, help="folder of the per-module graphs")
    merging.add_argument("--to", dest="destination", required=True, help="folder for BooksyncPackage's graphs")
    checking = commands.add_parser("check", help="links no catalog builds, and articles named that do not exist")
    checking.add_argument("graphs", nargs="+", help="folders of the graphs the catalogs are built from")
    args = parser.parse_args()
    if args.command == "merge":
        count = merge(args.modules.split(","), args.source, args.destination)
        print(f"{MODULE}: {count} symbols of {args.modules.replace(',', ', ')}")
        return
    problems = check(ROOT, args.graphs)
    for problem in problems:
        print(problem)
    sys.stdout.flush()
    if problems:
        sys.exit(f"{len(problems)} problem(s): a <doc:> link belongs in a doc comment a catalog builds; "
                 "elsewhere, name the article in plain text as it is spelled in its catalog")
    print("every <doc:> link of a Swift comment is in a doc comment a catalog builds; every article named in plain text exists")


if __name__ == "__main__":
    main()
