"""The fenced code blocks of booksync's docs, for the checks that run or compile them.

The docs are README.md and the articles of the three DocC catalogs: the library's
and the manual, each in its target (Sources/*/*.docc/*.md), and the contributor
catalog (Sources/*.docc/*.md). A block may sit in a list item, indented; its lines
come back with that indentation removed.
"""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = ["README.md"] + sorted(os.path.relpath(p, ROOT) for pattern in ("*.docc", os.path.join("*", "*.docc"))
                              for p in glob.glob(os.path.join(ROOT, "Sources", pattern, "*.md")))
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<language>[^\n]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.MULTILINE | re.DOTALL)


def blocks(path):
    """(language, first line number, lines) of each fenced block of the doc at `path` (relative to the repository)."""
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    found = []
    for match in FENCE.finditer(text):
        indent = match.group("indent")
        lines = [line[len(indent):] if line.startswith(indent) else line for line in match.group("body").splitlines()]
        found.append((match.group("language").strip(), text.count("\n", 0, match.start()) + 1, lines))
    return found
