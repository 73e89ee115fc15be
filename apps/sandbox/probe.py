"""The confinement probe: a submission that reports what a learner's code can see and do.

A worker runs it at start (with the canary) and refuses sandbox work if any answer is wrong; the
container-settings test runs it too. ``problems`` compares its report with what must hold.
"""

from __future__ import annotations

import platform
from typing import Any

from apps.sandbox.runner import BASE_ENV, Job

PROBE_SOURCE = r"""
import os, socket


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    return None


def _attempt(fn):
    try:
        fn()
        return "ok"
    except Exception as exc:
        return type(exc).__name__


def _write(path):
    with open(path, "w") as f:
        f.write("x")


def _connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(("192.0.2.1", 80))


def _resolve():
    socket.getaddrinfo("deb.debian.org", 80)


def probe():
    with open("/proc/net/dev") as f:
        interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
    return {
        "uid": os.getuid(),
        "euid": os.geteuid(),
        "gid": os.getgid(),
        "cap_eff": _status("CapEff"),
        "cap_bnd": _status("CapBnd"),
        "no_new_privs": _status("NoNewPrivs"),
        "seccomp": _status("Seccomp"),
        "write_root": _attempt(lambda: _write("/probe")),
        "write_opt": _attempt(lambda: _write("/opt/sandbox/probe")),
        "write_tmp": _attempt(lambda: _write("/tmp/probe")),
        "connect": _attempt(_connect),
        "resolve": _attempt(_resolve),
        "interfaces": interfaces,
        "env": sorted(os.environ),
        "cpus": len(os.sched_getaffinity(0)),
        "hostname": os.environ.get("HOSTNAME"),
        "pid1": open("/proc/1/cmdline", "rb").read().split(b"\0")[0].decode(),
        "kernel": os.uname().release,
    }
"""


def job() -> Job:
    return Job("probe", [{"id": "probe", "args": [], "kwargs": {}}], {"submission.py": PROBE_SOURCE})


def facts(report: dict[str, Any] | None) -> dict[str, Any] | None:
    for item in (report or {}).get("results", []):
        if isinstance(item, dict) and item.get("id") == "probe" and item.get("ok"):
            value = item.get("value")
            return value if isinstance(value, dict) else None
    return None


def problems(found: dict[str, Any] | None, runtime: str = "") -> list[str]:
    """Everything about the confinement that is not as it must be (empty: all good).

    Under gVisor (``runtime`` "runsc") the code talks to gVisor's kernel, not the host's: it must
    see a kernel other than the host's, and the host kernel's seccomp and no_new_privs marks do not
    show in its /proc (gVisor's own kernel serves every system call; the host's seccomp filters
    gVisor itself), so those two are not asked for.
    """
    if found is None:
        return ["the probe reported nothing"]
    out = []
    gvisor = runtime == "runsc"
    if gvisor and found.get("kernel") == platform.release():
        out.append(f"kernel: the code sees the host's kernel {platform.release()}, not gVisor's")
    expect = {
        "uid": 10001,
        "euid": 10001,
        "cap_eff": "0000000000000000",
        "cap_bnd": "0000000000000000",
        **({} if gvisor else {"no_new_privs": "1", "seccomp": "2"}),
        "write_tmp": "ok",
        "interfaces": ["lo"],
        "cpus": 1,
        "hostname": "sandbox",
    }
    for key, want in expect.items():
        if found.get(key) != want:
            out.append(f"{key}: expected {want!r}, found {found.get(key)!r}")
    for path in ("write_root", "write_opt"):
        if found.get(path) == "ok":
            out.append(f"{path}: the read-only filesystem took a write")
    if found.get("connect") == "ok":
        out.append("network: a TCP connection went out")
    if found.get("resolve") == "ok":
        out.append("network: a DNS name resolved")
    env = set(found.get("env") or [])
    allowed = set(BASE_ENV) | {"OMP_NUM_THREADS", "HOSTNAME"}  # HOSTNAME: Docker's, fixed to "sandbox"
    if not env <= allowed:
        out.append(f"environment: unexpected variables {sorted(env - allowed)}")
    if "init" not in str(found.get("pid1")):
        out.append(f"pid 1 is {found.get('pid1')!r}, not an init process")
    return out
