"""What the Python checks share: a tally of checks, and a pinned package in a
virtual environment of its own under .build/ (kept between runs, rebuilt when
the pinned version changes)."""
import os
import shutil
import json
import subprocess
import sys
import urllib.parse
import urllib.request

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Checks:
    """Counts passed and failed checks; prints each failure as it happens."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, condition, what):
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL: " + what, flush=True)
        return condition

    def finish(self):
        """Prints "N passed, M failed" and returns the exit code: 1 when a check failed."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 1 if self.failed else 0


class PinnedVenv:
    """`.build/NAME` with `package==version` installed by pip from the registry."""

    def __init__(self, name, package, version):
        self.path = os.path.join(REPOSITORY, ".build", name)
        self.requirement = "%s==%s" % (package, version)
        self.marker = os.path.join(self.path, "installed-%s-%s" % (package, version))

    @property
    def python(self):
        return os.path.join(self.path, "bin", "python")

    def ensure(self):
        """Creates the environment with the pinned package unless it is there."""
        if os.path.exists(self.marker):
            return
        shutil.rmtree(self.path, ignore_errors=True)
        print("creating %s with %s" % (os.path.relpath(self.path, REPOSITORY), self.requirement), flush=True)
        subprocess.run([sys.executable, "-m", "venv", self.path], check=True, timeout=120, stdin=subprocess.DEVNULL)
        subprocess.run([self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", self.requirement],
                       check=True, timeout=600, stdin=subprocess.DEVNULL)
        with open(self.marker, "w") as f:
            f.write(self.requirement + "\n")

    def run_inside(self, script, arguments):
        """Replaces this process with `script` run by the environment's Python, `--in-venv` added."""
        self.ensure()
        os.execv(self.python, [self.python, os.path.abspath(script), *arguments, "--in-venv"])


def emulator_documents(host, project, collection="books", mask=None):
    """Every document of `collection` on the emulator at `host`, page by page
    (at most 10,000 pages); `mask`: the field paths to return (e.g. ["__name__"])."""
    documents, token = [], None
    for _ in range(10_000):
        query = [("pageSize", "300")] + [("mask.fieldPaths", f) for f in (mask or [])] + ([("pageToken", token)] if token else [])
        url = "http://%s/v1/projects/%s/databases/(default)/documents/%s?%s" % (host, project, collection, urllib.parse.urlencode(query))
        request = urllib.request.Request(url, headers={"Authorization": "Bearer owner"})
        with urllib.request.urlopen(request, timeout=30) as response:
            page = json.loads(response.read() or b"{}")
        documents += page.get("documents", [])
        token = page.get("nextPageToken")
        if not token or not page.get("documents"):
            break
    return documents
