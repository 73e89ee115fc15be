"""The in-container driver: runs a learner's function in a child process and reports what it did.

Runs as the container's main process (under docker-init, as the unprivileged ``learner`` user),
standard library only, with ``python -I -S``. It reads ONE line of JSON on stdin:

    {"entry": "f", "cases": [{"id", "args", "kwargs", "probe"?}], "files": {"submission.py": "..."},
     "time_limit": 10.0, "output_limit": 1048576}

The request holds the inputs of each test, never the expected values: those stay with the worker,
which decides pass or fail (``apps/sandbox/verdict.py``). A case with a ``probe`` names a checker
in the exercise's ``checks.py`` (sent as one of the files) that reports facts about the learner's
function instead of its value (``child.py``, ``probes.py``). The driver writes the files into a
fresh directory on the tmpfs, hands the cases to ``child.py`` (the learner's process) over a pipe
and reads back one JSON line per case, which it passes on at once as ``{"result": {...}}`` (the
worker shows each test's result as it completes). The child's prints go to a separate, capped
pipe. It ends with ONE line of JSON on stdout:

    {"results": "streamed", "prints": "...", "limit": null|"timeout"|"output_limit"|"memory_limit",
     "signal": null|"SIGSEGV", "exit_code": 0}

Two ways to start. Cold, ``driver.py WORKDIR``: the job is on stdin already, the child starts
after it. Pooled, ``driver.py WORKDIR --warm numpy,jax --idle 300``: the child starts at once and
imports those modules, the driver prints ``{"ready": true, ...}`` and waits for the job; the time
limit counts from the job's arrival. Either way a container runs one job and ends.

Nothing here is trusted by the worker: a learner's process can kill or impersonate the driver,
but all it can forge are values, which must then equal expected values it never saw.
"""

import contextlib
import json
import os
import re
import select
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


def write_files(request, workdir):
    """The job's files into the work directory; a bad name is the only refusal."""
    for name in request.get("files", {}):
        if not _SAFE_NAME.match(name):
            return f"bad file name {name!r}"
    for name, text in request.get("files", {}).items():
        with open(os.path.join(workdir, name), "w", encoding="utf-8") as f:
            f.write(text)
    return None


def start_child(workdir, warm=None):
    """The learner's process. With ``warm`` (a pooled container) it imports those modules, if any,
    says so on its results pipe (one line), then waits for its request."""
    argv = [sys.executable, "-I", "-B", os.path.join(HERE, "child.py")]
    if warm is not None:
        argv += ["--warm", ",".join(warm)]
    return subprocess.Popen(  # noqa: S603 - fixed argv
        # -I: no environment variables, user site or cwd on the path; -B: no .pyc files written.
        [*argv, os.path.join(workdir, "submission.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=workdir,
        process_group=0,
    )


def emit(item):
    sys.stdout.buffer.write(json.dumps(item).encode() + b"\n")
    sys.stdout.buffer.flush()


def run(request, workdir, proc=None, started=None):
    """Run one request: in ``proc`` (a warm child) if given, else in a child started now. The time
    limit counts from ``started`` (when the job arrived). Each result the child reports is passed
    on at once as ``{"result": ...}``; the report that ends the run comes last."""
    started = time.monotonic() if started is None else started
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    problem = write_files(request, workdir)
    if problem:
        if proc is not None:
            _kill(proc)
        return {"fatal": problem}
    time_limit = float(request.get("time_limit", 10.0))
    output_limit = int(request.get("output_limit", 1 << 20))
    child_request = json.dumps({"entry": request["entry"], "cases": request["cases"]}).encode() + b"\n"

    proc = proc or start_child(workdir)
    try:
        proc.stdin.write(child_request)
        proc.stdin.close()
    except BrokenPipeError:
        pass

    pending, results_bytes, prints = bytearray(), 0, bytearray()
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
                results_bytes += len(chunk)
                if results_bytes > output_limit:
                    limit = "output_limit"
                    continue
                pending += chunk
                *lines, rest = pending.split(b"\n")
                pending = bytearray(rest)
                for item in _parse_lines(b"\n".join(lines)):
                    emit({"result": item})
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
    if not limit:
        for item in _parse_lines(bytes(pending)):
            emit({"result": item})
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
        "results": "streamed",
        "prints": prints.decode("utf-8", "replace"),
        "prints_truncated": prints_total > len(prints),
        "limit": limit,
        "signal": sig,
        "exit_code": returncode,
        "elapsed": round(elapsed, 4),
    }
    return report


def _read_line(fd, limit=4096):
    """One line from a pipe, byte by byte: nothing past it is taken from the pipe."""
    line = bytearray()
    while len(line) < limit:
        byte = os.read(fd, 1)
        if not byte or byte == b"\n":
            break
        line += byte
    return bytes(line)


def serve_warm(workdir, warm, idle_s):
    """A pooled container: start the learner's process with ``warm`` imported, say ``ready``, then
    wait (at most ``idle_s``) for the one job this container will ever run."""
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    proc = start_child(workdir, warm)
    said = _read_line(proc.stdout.fileno())
    emit({"ready": True, "warm": list(warm), "child": said.decode("utf-8", "replace")[:200]})
    readable, _, _ = select.select([sys.stdin.buffer], [], [], idle_s)
    line = sys.stdin.buffer.readline() if readable else b""
    started = time.monotonic()
    if not line:
        _kill(proc)
        return {"fatal": "driver: no job came (idle lifetime over)"}
    return run(json.loads(line), workdir, proc=proc, started=started)


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
    # driver.py WORKDIR [--warm numpy,jax --idle SECONDS]
    args = sys.argv[1:]
    workdir = args[0] if args else "/tmp/job"  # noqa: S108 - the container's own tmpfs
    options = dict(zip(args[1::2], args[2::2], strict=False))
    try:
        if "--warm" in options:
            warm = tuple(m for m in options["--warm"].split(",") if m)
            report = serve_warm(workdir, warm, float(options.get("--idle", "300")))
        else:
            report = run(json.loads(sys.stdin.buffer.readline()), workdir)
    except Exception as exc:
        report = {"fatal": f"driver: {type(exc).__name__}: {exc}"}
    emit(report)


if __name__ == "__main__":
    main()
