"""Running booksync: the environment a run gets, a binary bound to it, and the
generated record files of scripts/make-collection.py."""
import os
import signal
import subprocess
import sys

from . import process

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.dirname(SCRIPTS)
MAKE_COLLECTION = os.path.join(SCRIPTS, "make-collection.py")


def environment(host=None, *, drop=(), **settings):
    """This process's environment for a booksync run: without the variables whose
    names start with one of `drop`, with NO_COLOR=1, FIRESTORE_EMULATOR_HOST=host
    when a host is given, and `settings` on top."""
    drop = tuple(drop)
    env = {k: v for k, v in os.environ.items() if not (drop and k.startswith(drop))}
    env["NO_COLOR"] = "1"
    if host:
        env["FIRESTORE_EMULATOR_HOST"] = host
    env.update(settings)
    return env


class Booksync:
    """A booksync binary and the environment its commands run in (default:
    environment(host)). Calling it runs one command in a directory (`-C`; None:
    none) and returns a harness.process.Result; `host=` points that one run at
    another endpoint (a proxy), `env=` replaces the environment for it."""

    def __init__(self, binary, host=None, env=None, timeout=300):
        self.binary = os.path.abspath(binary)
        self.env = env if env is not None else environment(host)
        self.timeout = timeout

    def command(self, directory, *args):
        return [self.binary] + (["-C", directory] if directory else []) + list(args)

    def environment(self, host=None, env=None):
        env = self.env if env is None else env
        return dict(env, FIRESTORE_EMULATOR_HOST=host) if host else env

    def __call__(self, directory, *args, host=None, env=None, timeout=None, **options):
        return process.run(self.command(directory, *args), env=self.environment(host, env),
                           timeout=timeout or self.timeout, **options)

    def start(self, directory, *args, host=None, env=None, **options):
        """The command as a running subprocess.Popen (no standard input)."""
        return subprocess.Popen(self.command(directory, *args), env=self.environment(host, env), stdin=subprocess.DEVNULL,
                                **options)

    def signal_after(self, directory, args, delay, signal_number=signal.SIGKILL, host=None, cwd=None, states=None):
        """The command, sent `signal_number` after `delay` seconds: harness.process.signal_after."""
        return process.signal_after(self.command(directory, *args), delay, signal_number, cwd=cwd,
                                    env=self.environment(host), states=states)

    def offers(self, command, option):
        """Whether `booksync COMMAND --help` mentions `option` (an older binary may lack it)."""
        try:
            result = process.run([self.binary, command, "--help"], env=self.env, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return option in result.output


def make_collection(directory, count, seed=1):
    """Writes `count` deterministic book records into `directory` (scripts/make-collection.py)."""
    subprocess.run([sys.executable, MAKE_COLLECTION, directory, str(count), str(seed)], check=True, stdin=subprocess.DEVNULL)
