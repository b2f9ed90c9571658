#!/usr/bin/env python3
"""Renders booksync's Markdown (plan --markdown, diff --markdown) with cmark-gfm,
the renderer GitHub uses, and fails when anything from a record renders as markup.

  check-markdown.py [FILE.md...]      default: fixtures/markdown/*.md and fixtures/compare/*.md
  check-markdown.py --self-test       prove an unescaped table is caught

Raw HTML is rendered (CMARK_OPT_UNSAFE), so an escape that fails shows up as a
tag. Checks, per file:
  - only the tags booksync's own layout makes: h3, p, em, ul, li, table, thead, tbody,
    tr, th, td, and code holding exactly "@" or "#" (how mentions and issue
    links are kept from forming); no a, img, script, del, strong, br…;
  - every table row of the source has as many unescaped pipes as its heading
    (cmark-gfm drops a row's extra cells silently, so this is read from the
    source, a backslash escaping the character after it, as cmark-gfm reads it);
  - no @ or # in rendered text outside those code spans (GitHub links them);
  - no control, bidirectional or invisible character in the output.
cmark-gfm comes from PyPI (pinned) into .build/markdown-venv.
"""
import glob
import html.parser
import os
import sys

from harness.booksync import REPOSITORY
from harness.checks import Checks, PinnedVenv

VENV = PinnedVenv("markdown-venv", "cmarkgfm", "2025.10.22")
ALLOWED = {"h3", "p", "em", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "code"}
HIDDEN = [c for c in range(0x20)] + list(range(0x7F, 0xA0)) + [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x180E] \
    + list(range(0x200B, 0x2010)) + list(range(0x2028, 0x202F)) + list(range(0x2060, 0x2070)) + [0x2800, 0x3164] \
    + [0xFEFF, 0xFFA0, 0xFFF9, 0xFFFA, 0xFFFB] + list(range(0xE0000, 0xE0080))


class Inspector(html.parser.HTMLParser):
    """Collects what a rendered document holds: tags, row cell counts, stray text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.stack = []
        self.code_text = ""
        self.heading_cells = None
        self.cells = 0

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED:
            self.problems.append("renders a <%s> tag" % tag)
        self.stack.append(tag)
        if tag == "tr":
            self.cells = 0
        elif tag in ("td", "th"):
            self.cells += 1
        elif tag == "code":
            self.code_text = ""

    def handle_endtag(self, tag):
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        if tag == "code" and self.code_text not in ("@", "#"):
            self.problems.append("renders a code span %r" % self.code_text)
        if tag == "tr":
            if "thead" in self.stack:
                self.heading_cells = self.cells
            elif self.heading_cells is not None and self.cells != self.heading_cells:
                self.problems.append("a row has %d cells, its table %d" % (self.cells, self.heading_cells))
        if tag == "table":
            self.heading_cells = None

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "code":
            self.code_text += data
            return
        for mark in "@#":
            if mark in data:
                self.problems.append("%r outside a code span in %r" % (mark, data[:60]))


def pipes(row):
    """The cell separators of a table row: pipes not escaped by a backslash."""
    count, index = 0, 0
    while index < len(row):
        if row[index] == "\\":
            index += 2
            continue
        count += row[index] == "|"
        index += 1
    return count


def row_problems(markdown):
    found, expected = [], None
    for line in markdown.split("\n"):
        if not line.startswith("|"):
            expected = None
            continue
        if expected is None:
            expected = pipes(line)
        elif pipes(line) != expected:
            found.append("a row has %d cell separators, its table %d: %r" % (pipes(line), expected, line[:80]))
    return found


def problems_of(markdown):
    import cmarkgfm
    from cmarkgfm.cmark import Options
    rendered = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    inspector = Inspector()
    inspector.feed(rendered)
    found = row_problems(markdown) + inspector.problems
    for scalar in HIDDEN:
        if scalar != 0x0A and chr(scalar) in rendered:
            found.append("keeps U+%04X" % scalar)
    return found


def main():
    arguments = VENV.enter(__file__)
    checks = Checks()
    if arguments == ["--self-test"]:
        naive = "| Record | Value |\n| --- | --- |\n| a | y <b>@you</b> `code` |\n| a | x | y |\n"
        found = problems_of(naive)
        for expected in ("renders a <b> tag", "a row has 4 cell separators, its table 3", "renders a code span 'code'", "'@' outside a code span"):
            checks.check(any(expected in p for p in found), "the self-test's unescaped table is not caught for %r: %s" % (expected, found))
        sys.exit(checks.finish())
    files = arguments or sorted(glob.glob(os.path.join(REPOSITORY, "fixtures", "markdown", "*.md")) + glob.glob(os.path.join(REPOSITORY, "fixtures", "compare", "*.md")))
    checks.check(bool(files), "no Markdown files to check")
    for path in files:
        with open(path, encoding="utf-8") as f:
            found = problems_of(f.read())
        checks.check(not found, "%s: %s" % (os.path.relpath(path), "; ".join(found[:10])))
    print("%d Markdown files render as booksync laid them out (cmark-gfm)" % len(files))
    sys.exit(checks.finish())


if __name__ == "__main__":
    main()
