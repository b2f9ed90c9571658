#!/usr/bin/env python3
"""Fails when a public library symbol has no `///` doc comment.

Lists every `public`/`open` declaration in the library targets (BooksyncCore,
BooksyncKit, BooksyncURLSession, BooksyncCodable, BooksyncStore) whose line is
not directly preceded by a `///` doc comment (attribute lines such as
`@inlinable` may sit in between; a blank line may not). An embedding app reads
these comments in its editor, so the check keeps the whole public surface
documented.

Exempt are implementations of standard-library protocol requirements whose
meaning the protocol already documents (EXEMPT below); keep that list short.
Not checked: enum cases, and members of a `public extension` that lack their
own `public` (the code base has no public extension; write `public` on each
member instead).

Usage:
  scripts/check-docs.py [PATH...]  check these directories or .swift files
                                   (default: the five library targets);
                                   exit 1 with `file:line: symbol` lines if any
                                   declaration lacks a doc comment, else print
                                   the count of checked declarations and exit 0
  scripts/check-docs.py --self-test
                                   prove the check can fail: run it on a temporary
                                   directory with one documented and one
                                   undocumented declaration
"""
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DIRS = ["Sources/BooksyncCore", "Sources/BooksyncKit", "Sources/BooksyncURLSession", "Sources/BooksyncCodable",
                "Sources/BooksyncStore"]

# Protocol requirements documented by their protocol (CustomStringConvertible,
# CustomDebugStringConvertible, CustomReflectable, LocalizedError, Equatable,
# Comparable, Hashable, Codable, Sequence).
EXEMPT = {
    "description", "debugDescription", "customMirror", "errorDescription",
    "==", "<", "hash(into:)", "init(from:)", "encode(to:)", "makeIterator",
}

KEYWORDS = ("func|var|let|init|subscript|class|struct|enum|protocol|typealias|actor|"
            "extension|case|associatedtype|macro|deinit")
DECLARATION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*"          # attributes on the same line
    r"(?:\w+\s+)*?(?:public|open)(?:\(set\))?\s+"  # modifiers, then the access level
    r"(?:[\w()]+\s+)*?(" + KEYWORDS + r")\b"    # more modifiers, then the keyword
    r"\s*(.*)$")


def symbol_name(keyword, rest):
    """The name the exemption list uses: `description`, `==`, `hash(into:)`, ..."""
    if keyword == "init":
        match = re.match(r"[?!]?\s*(?:<[^>]*>)?\(\s*(\w+)", rest)
        return "init(" + match.group(1) + ":)" if match else "init()"
    match = re.match(r"(`?\w+`?|[-!%&*+./<=>?^|~]+)\s*(?:<[^>]*>)?\s*(\(\s*(\w+))?", rest)
    if not match:
        return keyword
    name = match.group(1).strip("`")
    if keyword == "func" and (name[0].isalpha() or name[0] == "_") and match.group(3) and match.group(3) != "_":
        return name + "(" + match.group(3) + ":)"
    return name


def code_lines(text):
    """Yields (index, line) for lines that start outside a block comment or a
    multi-line string literal, so prose and test fixtures never count."""
    in_block = False
    in_string = False
    for index, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if in_string:
            if stripped.startswith('"""'):
                in_string = False
            continue
        if in_block:
            if "*/" in line:
                in_block = False
            continue
        code = line.split("//", 1)[0]
        if code.count('"""') % 2 == 1:
            in_string = True
        if "/*" in code and "*/" not in code.split("/*", 1)[1]:
            in_block = True
        yield index, stripped


def has_doc(lines, index):
    above = index - 1
    while above >= 0 and lines[above].strip().startswith("@"):
        above -= 1
    if above < 0:
        return False
    return lines[above].strip().startswith("///")


def check(paths):
    missing = []
    checked = 0
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        lines = text.split("\n")
        for index, stripped in code_lines(text):
            match = DECLARATION.match(stripped)
            if not match:
                continue
            keyword, rest = match.group(1), match.group(2)
            name = symbol_name(keyword, rest)
            if keyword == "extension" or name in EXEMPT:
                continue
            checked += 1
            if not has_doc(lines, index):
                missing.append(f"{os.path.relpath(path)}:{index + 1}: {name if keyword == 'init' else keyword + ' ' + name}")
    return checked, missing


def swift_files(directories):
    found = []
    for directory in directories:
        if directory.endswith(".swift"):
            found.append(directory)
        for base, _, names in os.walk(directory):
            found.extend(os.path.join(base, name) for name in names if name.endswith(".swift"))
    return sorted(found)


def self_test():
    sample = '''/// Documented: the check must accept it.
@inlinable
public func documented() {}

public struct Undocumented: Comparable {
    public var description: String { "exempt" }
    public static func < (a: Undocumented, b: Undocumented) -> Bool { false }
}
'''
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "Sample.swift")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(sample)
        checked, missing = check([path])
    names = [line.split(": ", 1)[1] for line in missing]
    if checked != 2 or names != ["struct Undocumented"] or not missing[0].endswith("Sample.swift:5: struct Undocumented"):
        print(f"self-test FAILED: checked {checked}, reported {missing}", file=sys.stderr)
        return 1
    print("self-test passed: the undocumented declaration was reported, the documented and exempt ones were not")
    return 0


def main(arguments):
    if arguments == ["--self-test"]:
        return self_test()
    if any(argument.startswith("-") for argument in arguments):
        print(__doc__.split("Usage:", 1)[1].rstrip(), file=sys.stderr)
        return 2
    if not arguments:
        os.chdir(ROOT)
    directories = arguments or DEFAULT_DIRS
    checked, missing = check(swift_files(directories))
    if missing:
        print("\n".join(missing))
        print(f"{len(missing)} of {checked} public declarations have no /// doc comment", file=sys.stderr)
        return 1
    print(f"{checked} public declarations, all documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
