"""The in-container driver: runs a learner's function in a child process and reports what it did.

Runs as the container's main process (under docker-init, as the unprivileged ``learner`` user),
standard library only, with ``python -I -S``. It reads ONE line of JSON on stdin:

    {"entry": "f", "cases": [{"id", "args", "kwargs", "probe"?}], "files": {"submission.py": "..."},
     "time_limit": 10.0, "output_limit": 1048576}

The request holds the inputs of each test, never the expected values: those stay with the worker,
which decides pass or fail (``apps/sandbox/verdict.py``). A case with a ``probe`` names a checker
in the exercise's ``checks.py`` (sent as one of the files) that reports facts about the learner's
function instead of its value (``child.py``, ``probes.py``). The driver writes the files into a
fresh directory on the tmpfs, starts ``child.py`` as its own process, sends it the cases over a
pipe and reads back one JSON line per case. The child's own prints go to a separate, capped pipe.
It ends with ONE line of JSON on stdout:

    {"results": [...], "prints": "...", "limit": null|"timeout"|"output_limit"|"memory_limit",
     "signal": null|"SIGSEGV", "exit_code": 0}

Nothing here is trusted by the worker: a learner's process can kill or impersonate the driver,
but all it can forge are values, which must then equal expected values it never saw.
"""

import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PRINTS_KEPT = 16_000  # characters of the learner's prints shown back
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


def _memory_killed():
    """Did the kernel's OOM killer act in this container's memory cgroup (v2 or v1)?"""
    try:
        with open("/sys/fs/cgroup/memory.events") as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
    except OSError:
        pass
    try:
        with open("/sys/fs/cgroup/memory/memory.oom_control") as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        with open("/sys/fs/cgroup/memory/memory.failcnt") as f:
            return int(f.read().strip() or 0) > 0
    except (OSError, ValueError):
        return False


def _kill(proc):
    for target in (lambda: os.killpg(proc.pid, signal.SIGKILL), proc.kill):
        with contextlib.suppress(OSError):
            target()


def run(request, workdir):
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    for name, text in request.get("files", {}).items():
        if not _SAFE_NAME.match(name):
            return {"fatal": f"bad file name {name!r}"}
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as f:
            f.write(text)
    time_limit = float(request.get("time_limit", 10.0))
    output_limit = int(request.get("output_limit", 1 << 20))
    child_request = json.dumps({"entry": request["entry"], "cases": request["cases"]}).encode() + b"\n"

    started = time.monotonic()
    proc = subprocess.Popen(  # noqa: S603 - fixed argv
        # -I: no environment variables, user site or cwd on the path; -B: no .pyc files written.
        [sys.executable, "-I", "-B", os.path.join(HERE, "child.py"), os.path.join(workdir, "submission.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        process_group=0,
    )
    try:
        proc.stdin.write(child_request)
        proc.stdin.close()
    except BrokenPipeError:
        pass

    results, prints = bytearray(), bytearray()
    prints_total, limit = 0, None
    sel = selectors.DefaultSelector()
    for stream, name in ((proc.stdout, "results"), (proc.stderr, "prints")):
        os.set_blocking(stream.fileno(), False)
        sel.register(stream, selectors.EVENT_READ, name)
    open_streams, exited = 2, False
    while open_streams and not limit:
        remaining = started + time_limit - time.monotonic()
        if remaining <= 0:
            limit = "timeout"
            break
        events = sel.select(timeout=min(remaining, 0.05 if exited else 0.5))
        for key, _ in events:
            try:
                chunk = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            if key.data == "results":
                results += chunk
                if len(results) > output_limit:
                    limit = "output_limit"
            else:
                prints_total += len(chunk)
                if len(prints) < PRINTS_KEPT:
                    prints += chunk[: PRINTS_KEPT - len(prints)]
                if prints_total > output_limit:
                    limit = "output_limit"
        # Processes the learner started may hold the pipes open after their process ended: once it
        # has exited and the pipes are quiet, stop reading.
        if exited and not events:
            break
        exited = exited or proc.poll() is not None
    if limit:
        _kill(proc)
    try:
        returncode = proc.wait(timeout=max(0.5, started + time_limit - time.monotonic()))
    except subprocess.TimeoutExpired:
        limit = limit or "timeout"
        _kill(proc)
        returncode = proc.wait()
    elapsed = time.monotonic() - started

    sig = None
    if returncode < 0:
        sig = signal.Signals(-returncode).name if -returncode in signal.valid_signals() else str(-returncode)
        if not limit and -returncode == signal.SIGKILL and _memory_killed():
            limit = "memory_limit"
    report = {
        "results": _parse_lines(bytes(results)) if limit != "output_limit" else [],
        "prints": prints.decode("utf-8", "replace"),
        "prints_truncated": prints_total > len(prints),
        "limit": limit,
        "signal": sig,
        "exit_code": returncode,
        "elapsed": round(elapsed, 4),
    }
    return report


def _parse_lines(data):
    out = []
    for line in data.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def main():
    workdir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/job"  # noqa: S108 - the container's own tmpfs
    line = sys.stdin.buffer.readline()
    try:
        request = json.loads(line)
        report = run(request, workdir)
    except Exception as exc:
        report = {"fatal": f"driver: {type(exc).__name__}: {exc}"}
    sys.stdout.buffer.write(json.dumps(report).encode() + b"\n")
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
