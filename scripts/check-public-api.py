#!/usr/bin/env python3
"""Fails when booksync's public API differs from what its docs list, or collides with Apple's names.

An app imports one module, BooksyncStore, which re-exports the public parts of
BooksyncCore, BooksyncKit, BooksyncCodable and BooksyncURLSession; everything
else in them is `package`. This check reads the symbol graph scripts/docs made of
that module (.build/symbol-graphs/BooksyncStore.symbols.json) and compares:

1. its top-level public symbols with the ``Symbol`` entries of the Topics section
   of the library's landing article (Sources/BooksyncStore/BooksyncStore.docc/
   BooksyncStore.md): a type made public by accident, or one dropped, fails;
2. every public symbol (members included, one line per symbol: kind and path)
   with fixtures/public-api.txt, so a member made public by accident shows up as a
   diff (after an intended change: scripts/check-public-api.py --update, and
   review the diff);
3. the top-level names with the top-level names of Apple's frameworks: those on
   this machine are read from their symbol graphs (Foundation and its parts,
   Dispatch, Observation, Synchronization); those only on Apple's platforms
   (Combine, CryptoKit, SwiftUI, SwiftData, os) from the list below, their
   commonly used types as documented on developer.apple.com.

Usage:
  scripts/check-public-api.py [--update] [--graphs DIR]
  scripts/check-public-api.py --self-test   prove each of the three checks can fail
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANDING = os.path.join(ROOT, "Sources", "BooksyncStore", "BooksyncStore.docc", "BooksyncStore.md")
GOLDEN = os.path.join(ROOT, "fixtures", "public-api.txt")
MODULE = "BooksyncStore"

# Apple-only frameworks (not on Linux): their commonly used top-level names.
APPLE_ONLY = {
    "Combine": "Publisher Publishers Subscriber Subscribers Subscription Subject PassthroughSubject CurrentValueSubject "
               "AnyPublisher AnyCancellable Cancellable Just Future Deferred Empty Fail Record ObservableObject Published "
               "ConnectablePublisher Scheduler ImmediateScheduler AnySubscriber CombineIdentifier",
    "CryptoKit": "SHA256 SHA384 SHA512 SHA256Digest SHA384Digest SHA512Digest Insecure HMAC SymmetricKey SymmetricKeySize "
                 "P256 P384 P521 Curve25519 AES ChaChaPoly HKDF HPKE CryptoKitError Digest HashFunction "
                 "MessageAuthenticationCode SharedSecret SecureEnclave",
    "SwiftUI": "View Text Image Color Font List Table Group Section Label Link Form Button Toggle State Binding Environment "
               "EnvironmentObject ObservedObject StateObject App Scene WindowGroup Window Settings NavigationStack "
               "NavigationView NavigationLink ForEach HStack VStack ZStack Spacer Divider ScrollView Picker Slider Stepper "
               "TextField SecureField DatePicker Menu Alert Path Shape Circle Rectangle Capsule Edge Alignment Angle "
               "Animation Transaction GeometryReader Layout Grid GridRow Gauge ProgressView ViewBuilder AnyView EmptyView "
               "TupleView Gesture FocusState AppStorage SceneStorage Namespace Canvas TimelineView ToolbarItem Tab TabView "
               "DocumentGroup FileDocument ReferenceFileDocument Commands CommandMenu",
    "SwiftData": "Model ModelContainer ModelContext ModelConfiguration Schema Query Relationship Attribute FetchDescriptor "
                 "PersistentModel PersistentIdentifier VersionedSchema SchemaMigrationPlan MigrationStage Transient Unique",
    "os": "Logger OSLog OSSignposter OSAllocatedUnfairLock",
}
LOCAL_MODULES = ["Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking",
                 "Dispatch", "Observation", "Synchronization"]


def public_symbols(graph_path):
    """`kind path` lines of every public symbol, and the set of top-level names."""
    with open(graph_path) as f:
        graph = json.load(f)
    lines, top = set(), set()
    for symbol in graph["symbols"]:
        if symbol["accessLevel"] not in ("public", "open"):
            continue
        path = ".".join(symbol["pathComponents"])
        kind = symbol["kind"]["identifier"].removeprefix("swift.")
        lines.add(f"{kind} {path}")
        if len(symbol["pathComponents"]) == 1:
            top.add(path)
    return sorted(lines), top


def listed_in_landing(text):
    """The ``Symbol`` entries under `## Topics` of the landing article."""
    topics = text.split("## Topics", 1)[1] if "## Topics" in text else ""
    return set(re.findall(r"^- ``([^`]+)``\s*$", topics, re.MULTILINE))


def symbolgraph_extract():
    """The extractor's command: on PATH (Linux), or Xcode's through xcrun with the SDK (macOS)."""
    if shutil.which("xcrun"):
        sdk = subprocess.run(["xcrun", "--show-sdk-path"], capture_output=True, text=True, check=True).stdout.strip()
        return ["xcrun", "swift-symbolgraph-extract", "-sdk", sdk]
    return ["swift-symbolgraph-extract"]


def apple_names(target):
    """Top-level names of Apple's frameworks: local symbol graphs plus the list above."""
    names = {}
    for framework, words in APPLE_ONLY.items():
        for word in words.split():
            names[word] = framework
    extract = symbolgraph_extract()
    with tempfile.TemporaryDirectory() as out:
        for module in LOCAL_MODULES:
            result = subprocess.run(extract + ["-module-name", module, "-target", target,
                                     "-minimum-access-level", "public", "-output-dir", out],
                                    capture_output=True, text=True)
            if result.returncode != 0 and module == "Foundation":
                raise SystemExit(f"cannot read Foundation's symbol graph: {result.stderr.strip()}")
            if result.returncode != 0:
                continue  # a module this toolchain does not have
            for name in os.listdir(out):
                if not name.startswith(module + ".") and not name.startswith(module + "@"):
                    continue
                with open(os.path.join(out, name)) as f:
                    for symbol in json.load(f)["symbols"]:
                        if len(symbol["pathComponents"]) == 1 and symbol["accessLevel"] in ("public", "open") \
                                and not symbol["pathComponents"][0].startswith("_"):
                            names.setdefault(symbol["pathComponents"][0], module)
    return names


def check(lines, top, landing_text, golden_text, apple):
    """The problems found, as sentences; empty when all three checks pass."""
    problems = []
    listed = listed_in_landing(landing_text)
    for name in sorted(top - listed):
        problems.append(f"public symbol '{name}' is not listed in the Topics of {os.path.relpath(LANDING, ROOT)}")
    for name in sorted(listed - top):
        problems.append(f"'{name}' is listed in the Topics of {os.path.relpath(LANDING, ROOT)} but is not public")
    golden = [line for line in golden_text.splitlines() if line and not line.startswith("#")]
    added, removed = sorted(set(lines) - set(golden)), sorted(set(golden) - set(lines))
    for line in added:
        problems.append(f"newly public: {line} (intended? run scripts/check-public-api.py --update and commit the diff)")
    for line in removed:
        problems.append(f"no longer public: {line} (an API break for apps; intended? --update)")
    for name in sorted(top):
        if name in apple:
            problems.append(f"public name '{name}' collides with {apple[name]}'s '{name}'; rename it")
    return problems


def golden_text_for(lines):
    return ("# Every public symbol of BooksyncStore (kind, path), checked by scripts/check-public-api.py.\n"
            + "".join(line + "\n" for line in lines))


def self_test(lines, top, landing_text, golden_text):
    """Each check must be able to fail: feed it a changed input and expect its sentence."""
    cases = [
        ("an unlisted type", lines, top | {"Unlisted"}, landing_text, golden_text, {}, "is not listed"),
        ("a listed type that is not public", lines, top, landing_text + "\n- ``Ghost``\n", golden_text, {}, "is not public"),
        ("a member made public", lines + ["property RecordStore.secret"], top, landing_text, golden_text, {}, "newly public"),
        ("a name Apple uses", lines, top, landing_text, golden_text, {next(iter(top)): "CryptoKit"}, "collides with"),
    ]
    for name, l, t, land, gold, apple, expected in cases:
        problems = check(l, t, land, gold, apple)
        if not any(expected in p for p in problems):
            print(f"self-test failed: {name} was not reported ({problems})", file=sys.stderr)
            return 1
    if check(lines, top, landing_text, golden_text, {}):
        print("self-test failed: the unchanged inputs were reported", file=sys.stderr)
        return 1
    print(f"self-test passed: {len(cases)} changed inputs each reported")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphs", default=os.path.join(ROOT, ".build", "symbol-graphs"))
    parser.add_argument("--update", action="store_true", help="rewrite fixtures/public-api.txt from the module")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    graph = os.path.join(args.graphs, MODULE + ".symbols.json")
    if not os.path.exists(graph):
        print(f"no symbol graph at {graph}; run scripts/docs first", file=sys.stderr)
        return 2
    lines, top = public_symbols(graph)
    with open(LANDING) as f:
        landing_text = f.read()
    if args.update:
        with open(GOLDEN, "w") as f:
            f.write(golden_text_for(lines))
        print(f"wrote {len(lines)} public symbols to {os.path.relpath(GOLDEN, ROOT)}")
        return 0
    with open(GOLDEN) as f:
        golden_text = f.read()
    if args.self_test:
        return self_test(lines, top, landing_text, golden_text)
    info = subprocess.run(["swift", "-print-target-info"], capture_output=True, text=True, check=True).stdout
    apple = apple_names(json.loads(info)["target"]["triple"])
    problems = check(lines, top, landing_text, golden_text, apple)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"{len(top)} public types and functions, {len(lines)} public symbols, all listed; "
          f"no collision with {len(apple)} names of Apple's frameworks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
