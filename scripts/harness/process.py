"""Running commands: one finished command's output, exit status, wall time and peak
RSS; a time limit; stopping or signalling a command that runs."""
import os
import signal
import subprocess
import tempfile
import threading
import time

TIME = "/usr/bin/time"  # GNU time: its `-f %M` is the peak RSS


class Result:
    """One finished command, named as subprocess.CompletedProcess names it, plus
    `seconds` (spawn to reap), `rss_kb` (peak RSS in KiB; run(rss=True) only) and
    `cpu_seconds` (user + system CPU time of the command and the children it waited
    for, from os.wait4: what a loaded machine's waiting does not inflate)."""

    def __init__(self, args, returncode, stdout, stderr, seconds, rss_kb=None, cpu_seconds=None):
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr
        self.seconds, self.rss_kb, self.cpu_seconds = seconds, rss_kb, cpu_seconds

    @property
    def output(self):
        """stdout and stderr together: what a failure message shows."""
        return self.stdout + self.stderr


def run(command, *, cwd=None, env=None, timeout=300, text=True, merge=False, rss=False):
    """Runs `command` with no standard input and returns its Result.

    Its output goes to temporary files (a chatty command cannot block on a full
    pipe), decoded with `text` (bytes otherwise); `merge` sends stderr to stdout.
    After `timeout` seconds the command is killed and subprocess.TimeoutExpired
    raised. The wall time runs from spawn to reap (os.wait4).

    With rss=True the command runs under `/usr/bin/time -f %M`, whose answer becomes
    Result.rss_kb (None where GNU time is missing). os.wait4's own ru_maxrss is not
    usable for that: Linux counts the pre-exec image, so it never reports less than
    this Python process's RSS."""
    command = list(command)
    rss_path = None
    if rss and os.access(TIME, os.X_OK):
        handle, rss_path = tempfile.mkstemp(prefix="harness-rss-")
        os.close(handle)
        spawned = [TIME, "-f", "%M", "-o", rss_path] + command
    else:
        spawned = command
    holder, expired = {}, []

    def kill():
        if "process" in holder:
            expired.append(True)
            holder["process"].kill()

    timer = threading.Timer(timeout, kill)
    timer.daemon = True
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            timer.start()
            try:
                start = time.perf_counter()
                process = subprocess.Popen(spawned, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                           stderr=out if merge else err)
                holder["process"] = process
                try:
                    _, status, usage = os.wait4(process.pid, 0)
                except BaseException:  # an alarm or Ctrl-C in this process: the command does not outlive it
                    process.kill()
                    process.wait()
                    raise
                seconds = time.perf_counter() - start
            finally:
                timer.cancel()
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        if text:
            stdout, stderr = stdout.decode(errors="replace"), stderr.decode(errors="replace")
        if expired:
            raise subprocess.TimeoutExpired(command, timeout, output=stdout, stderr=stderr)
        rss_kb = None
        if rss_path is not None:
            with open(rss_path) as f:
                words = f.read().split()
            rss_kb = int(words[-1]) if words and words[-1].isdigit() else None
        return Result(command, process.returncode, stdout, stderr, seconds, rss_kb, usage.ru_utime + usage.ru_stime)
    finally:
        if rss_path is not None:
            os.unlink(rss_path)


def stop(process, timeout=10, signal_number=signal.SIGTERM):
    """Ends a running command: `signal_number` (SIGINT is Ctrl-C), then SIGKILL if it
    has not ended within `timeout` seconds. Returns its exit code."""
    if process.poll() is None:
        process.send_signal(signal_number)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    return process.returncode


def signal_state(pid, signal_number):
    """What /proc says of `pid` just before it is sent `signal_number` (Linux):
    its program's name, its state letter (Z: already ended) and whether it
    catches or ignores the signal yet. None where /proc cannot say."""
    try:
        program = os.path.basename(os.readlink("/proc/%d/exe" % pid))
        stat = open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace").read()
        fields = dict(line.split(":", 1) for line in open("/proc/%d/status" % pid, encoding="utf-8").read().splitlines() if ":" in line)
    except OSError:
        return None
    bit = 1 << (signal_number - 1)
    return {"program": program, "state": stat[stat.rindex(")") + 2:][:1],
            "listening": bool((int(fields["SigCgt"], 16) | int(fields["SigIgn"], 16)) & bit)}


def signal_after(command, delay, signal_number=signal.SIGKILL, *, cwd=None, env=None, grace=60, states=None):
    """Starts `command` (output discarded) and sends it `signal_number` if it still
    runs after `delay` seconds. Returns (whether the signal landed, its exit code);
    the code is a sentence when it had to be killed `grace` seconds after the signal.
    With a list as `states`, `signal_state` of the process at the signal is appended to it."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        return False, process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        if states is not None:
            states.append(signal_state(process.pid, signal_number))
        process.send_signal(signal_number)
        try:
            return True, process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
            return True, "did not stop within %d s" % grace
