"""What the Python checks share: a tally of checks, and a pinned package in a
virtual environment of its own under .build/ (kept between runs, rebuilt when
the pinned version changes)."""
import os
import shutil
import subprocess
import sys

from .booksync import REPOSITORY


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
    """`.build/NAME` with `package==version` installed by pip from the registry,
    and the pinned requirements of `also` ("name==version") beside it."""

    def __init__(self, name, package, version, also=()):
        self.path = os.path.join(REPOSITORY, ".build", name)
        self.requirements = ["%s==%s" % (package, version), *also]
        self.requirement = " ".join(self.requirements)
        self.marker = os.path.join(self.path, "installed-%s-%s" % (package, version)
                                   + "".join("+" + r.replace("==", "-") for r in also))

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
        try:
            subprocess.run([self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *self.requirements],
                           check=True, timeout=600, stdin=subprocess.DEVNULL)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as failure:
            shutil.rmtree(self.path, ignore_errors=True)
            raise SystemExit("pip could not install %s into %s (%s): is PyPI reachable?"
                             % (self.requirement, os.path.relpath(self.path, REPOSITORY), failure))
        with open(self.marker, "w") as f:
            f.write(self.requirement + "\n")

    def enter(self, script):
        """Runs `script` (the caller's `__file__`) inside the environment unless it
        already is; returns its command-line arguments without `--in-venv`."""
        if "--in-venv" not in sys.argv:
            self.run_inside(script, sys.argv[1:])
        return [a for a in sys.argv[1:] if a != "--in-venv"]

    def run_inside(self, script, arguments):
        """Replaces this process with `script` run by the environment's Python, `--in-venv` added."""
        self.ensure()
        os.execv(self.python, [self.python, os.path.abspath(script), *arguments, "--in-venv"])

