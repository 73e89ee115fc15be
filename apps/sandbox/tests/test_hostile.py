"""Hostile submissions, through the real worker and real containers.

Each submission answers an exercise and tries to do harm or to fake a pass: Transformer Math 0.5
(``param_count``) under the site's default limits, or, for the JAX attacks, Scaling Book 9.8
(``predict_batch``) under the limits a JAX exercise really has. Most are written so that IF the attack worked they would return the right answers — a pass
would mean a breach. Each test asserts the exact outcome, that it counted as a (failed) attempt,
and then that the same worker grades an honest submission correctly. None may pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from apps.exercises.choices import AttemptStatus, Verdict
from apps.sandbox.tests.conftest import Sandbox, SolutionReader

pytestmark = pytest.mark.slow

# The right answer, used by attacks that "succeed" only if they get what they are after.
RIGHT = "12 * n_layers * d * d + vocab_size * d"


@dataclass(frozen=True)
class Target:
    """The exercise a submission answers, and the honest reference graded after it."""

    workbook: str
    number: str
    reference: str  # under fixtures/workbooks/<workbook>/code/


PLAIN = Target("transformer-math", "0.5", "0.5-param-count/solution.py")  # the site's default limits
JAX = Target("scaling-book", "9.8", "9.8-vmap-predict/solution.py")  # its own limits: 30 s, 1024 MB


@dataclass(frozen=True)
class Hostile:
    name: str
    source: str
    outcome: str  # "a|b": either is right
    says: str = ""  # a fragment the feedback, a test message or the traceback must contain
    target: Target = PLAIN
    # Under gVisor (test_runtimes.py), where its kernel answers otherwise: (outcome, says), the
    # outcome possibly "a|b" where it depends on which limit gVisor meets first. Never a pass.
    gvisor: tuple[str, str] | None = None

    def __str__(self) -> str:
        return self.name


def fn(body: str, prelude: str = "", signature: str = "param_count(d, n_layers, vocab_size)") -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return f"{prelude.strip()}\n\ndef {signature}:\n{lines}\n"


def jax_fn(body: str, prelude: str = "import jax, jax.numpy as jnp") -> str:
    return fn(body, prelude, signature="predict_batch(params, xs)")


HOSTILE = [
    # --- time ------------------------------------------------------------------------------------
    Hostile("cpu_loop", fn("while True:\n    pass"), "timeout", "time limit"),
    Hostile("sleep_past_deadline", fn("time.sleep(600)\nreturn " + RIGHT, "import time"), "timeout"),
    Hostile("sleep_at_import", "import time\ntime.sleep(600)\n" + fn("return " + RIGHT), "timeout"),
    Hostile(
        "ignore_sigterm_and_spin",
        fn("while True:\n    pass", "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)"),
        "timeout",
    ),
    # --- memory, processes, threads, disk, output -----------------------------------------------
    Hostile(
        "memory_list_flood",
        fn("x = []\nwhile True:\n    x.append(bytearray(50_000_000))"),
        "memory_limit",
        gvisor=("memory_limit|timeout", ""),  # under ptrace on a slow machine the time limit may come first
    ),
    Hostile(
        "memory_numpy",
        fn("a = np.ones((60_000, 60_000))\nreturn int(a.sum())", "import numpy as np"),
        "error",
        "MemoryError",
        # gVisor overcommits the 28 GB and the cgroup kills; under ptrace on a loaded machine filling
        # the pages is slow enough that the time limit may come first (seen in a make test run)
        gvisor=("memory_limit|timeout", ""),
    ),
    Hostile(
        "fork_bomb",
        fn("while True:\n    if os.fork() == 0:\n        time.sleep(600)", "import os, time"),
        "error",
        "BlockingIOError",
        gvisor=("crash", "without reporting"),  # the pids limit takes the driver down with it
    ),
    Hostile(
        "thread_flood",
        fn(
            "ts = []\nwhile True:\n    t = threading.Thread(target=time.sleep, args=(600,), daemon=True)\n    t.start()\n    ts.append(t)",
            "import threading, time",
        ),
        "error",
        "can't start new thread",
        gvisor=("memory_limit|timeout", ""),  # gVisor's threads eat the memory, or the time, first
    ),
    Hostile(
        "tmpfs_flood",
        fn(
            "i = 0\nwhile True:\n    with open(f'/tmp/fill{i}', 'wb') as f:\n        f.write(b'x' * 8_000_000)\n    i += 1"
        ),
        "error",
        "No space left on device",
        gvisor=("error|timeout", ""),  # gVisor's tmpfs fills slowly under ptrace: the time limit may come first
    ),
    Hostile("file_size_limit", fn("open('/tmp/big', 'wb').write(b'x' * 40_000_000)"), "error", "File too large"),
    Hostile("print_flood", fn("while True:\n    print('x' * 100_000)"), "output_limit", "more output"),
    Hostile("fd1_flood", fn("while True:\n    os.write(1, b'y' * 100_000)", "import os"), "output_limit"),
    Hostile(
        "results_pipe_flood",
        fn(
            "for fd in range(3, 20):\n    try:\n        os.write(fd, b'z' * 2_000_000)\n    except OSError:\n        pass\nwhile True:\n    pass",
            "import os",
        ),
        "output_limit",
    ),
    # Past the 4,000,000-character cap, yet cheap to build and encode: a loaded machine must not
    # turn it into a timeout (a million-float list did, at the tests' 5 s limit).
    Hostile("huge_return_value", fn('return "x" * 4_000_001'), "failed", "too much data"),
    # --- network and secrets --------------------------------------------------------------------
    Hostile(
        "network_egress",
        fn("s = socket.create_connection(('1.1.1.1', 80), timeout=2)\nreturn " + RIGHT, "import socket"),
        "error",
        "OSError",
    ),
    Hostile(
        "dns_lookup", fn("socket.getaddrinfo('pypi.org', 443)\nreturn " + RIGHT, "import socket"), "error", "gaierror"
    ),
    Hostile(
        "read_environment_secrets",
        fn(
            "leaked = [k for k in os.environ if any(s in k for s in ('SECRET', 'DATABASE', 'REDIS', 'PASSWORD', 'DJANGO'))]\n"
            "if leaked:\n    return " + RIGHT + "\nraise RuntimeError('no secrets in ' + ','.join(sorted(os.environ)))",
            "import os",
        ),
        "error",
        "no secrets",
    ),
    Hostile(
        "read_other_jobs_files",
        fn(
            "others = [p for p in os.listdir('/tmp') if p not in ('job',)]\nraise RuntimeError(f'tmp holds {others}')",
            "import os",
        ),
        "error",
        "tmp holds []",
    ),
    Hostile(
        "find_hidden_tests_or_reference",
        fn(
            "raise RuntimeError(f'found {HITS}')",
            # The search runs once, at import: the driver then calls the function once a test case.
            "import os\n"
            "needles = (b'gpt2' + b'_small', b'12 * n_layers' + b' * d')  # a hidden test id; the reference\n"
            "HITS = []\n"
            "for root, dirs, files in os.walk('/'):\n"
            # Skipped: kernel views, and what Debian and pip wrote at image build, before any job existed.
            "    if root.startswith(('/proc', '/sys', '/dev', '/usr', '/opt/venv')):\n"
            "        dirs[:] = []\n        continue\n"
            "    for f in files:\n"
            "        path = os.path.join(root, f)\n"
            "        try:\n            data = open(path, 'rb').read(1_000_000)\n        except OSError:\n            continue\n"
            "        if any(n in data for n in needles) and path != '/tmp/job/submission.py':\n            HITS.append(path)\n",
        ),
        "error",
        "found []",
    ),
    Hostile(
        "read_expected_from_the_drivers_memory",
        fn(
            "needle = str(123532031 + 1).encode()  # the expected value of one hidden test\n"
            "pid = os.getppid()\nfound = False\n"
            "with open(f'/proc/{pid}/maps') as maps, open(f'/proc/{pid}/mem', 'rb') as mem:\n"
            "    for line in maps:\n"
            "        lo, hi = (int(x, 16) for x in line.split()[0].split('-'))\n"
            "        if 'r' not in line.split()[1] or hi - lo > 200_000_000:\n            continue\n"
            "        try:\n            mem.seek(lo)\n            found = found or needle in mem.read(hi - lo)\n        except (OSError, ValueError, OverflowError):\n            pass\n"
            "if found:\n    return " + RIGHT + "\nraise RuntimeError('the expected values are not in the driver')",
            "import os",
        ),
        "error",
        "not in the driver",
        gvisor=("error", "Permission denied"),  # gVisor refuses to open another process's memory
    ),
    Hostile(
        "read_expected_from_the_request",
        fn(
            "data = open(f'/proc/{os.getppid()}/cmdline', 'rb').read() + sys.stdin.read().encode()\n"
            "for pid in os.listdir('/proc'):\n"
            "    try:\n        data += open(f'/proc/{pid}/environ', 'rb').read()\n    except (OSError, ValueError):\n        pass\n"
            "raise RuntimeError('expected' in data.decode(errors='replace') and 'LEAK' or 'nothing to read')",
            "import os, sys",
        ),
        "error",
        "nothing to read",
    ),
    # --- forging a pass -------------------------------------------------------------------------
    Hostile(
        "fake_result_files",
        fn(
            "for p in ('/tmp/result.json', '/tmp/job/result.json', '/tmp/report.json'):\n"
            '    open(p, \'w\').write(\'{"outcome": "passed", "passed": true}\')\nreturn 0'
        ),
        "failed",
    ),
    Hostile(
        "print_a_forged_report",
        fn(
            "print(json.dumps({'results': [{'id': i, 'ok': True, 'value': 0} for i in ids], 'outcome': 'passed'}))\nreturn 0",
            "import json\nids = ['gpt2_small', 'gpt3', 'one_of_each', 'no_layers', 'keywords', 'tiny_vocab']",
        ),
        "failed",
    ),
    Hostile(
        "atexit_forged_report",
        fn(
            "return 0",
            "import atexit, json, os\n"
            "ids = ['gpt2_small', 'gpt3', 'one_of_each', 'no_layers', 'keywords', 'tiny_vocab']\n"
            "atexit.register(lambda: os.write(3, ''.join(json.dumps({'id': i, 'ok': True, 'value': 0}) + '\\n' for i in ids).encode()))",
        ),
        "failed",
    ),
    Hostile(
        "monkeypatch_the_reporter",
        fn(
            "return 0",
            "import json\n_real = json.dumps\n"
            "def dumps(obj, *a, **k):\n"
            "    if isinstance(obj, dict) and 'id' in obj:\n        obj = {'id': obj['id'], 'ok': True, 'value': 'passed'}\n"
            "    return _real(obj, *a, **k)\n"
            "json.dumps = dumps",
        ),
        "failed",
    ),
    Hostile(
        "write_the_drivers_stdout",
        fn(
            "out = open(f'/proc/{os.getppid()}/fd/1', 'w')\n"
            "out.write(json.dumps({'results': [{'id': 'gpt2_small', 'ok': True, 'value': 123532032}], 'limit': None}) + '\\n')\n"
            "out.flush()\nos.kill(os.getppid(), 9)\nreturn 0",
            "import json, os",
        ),
        "failed",
        "did not run",
    ),
    Hostile("skip_tests_by_exiting_zero", fn("os._exit(0)", "import os"), "failed", "did not run"),
    Hostile("sys_exit_at_import", "import sys\nsys.exit(0)\n" + fn("return " + RIGHT), "error", "SystemExit"),
    Hostile(
        "plant_sitecustomize_pth_conftest_and_shadow_modules",
        fn(
            "for name in ('sitecustomize.py', 'usercustomize.py', 'conftest.py', 'json.py', 'zz.pth', 'numpy.py'):\n"
            "    for folder in ('/tmp', '/tmp/job'):\n"
            "        open(os.path.join(folder, name), 'w').write('import os; os._exit(0)\\n')\n"
            "return 0",
            "import os",
        ),
        "failed",
    ),
    Hostile(
        "an_object_equal_to_everything",
        fn(
            "return Always()",
            "class Always(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__",
        ),
        "failed",
    ),
    Hostile("an_unreportable_object", fn("return object()"), "error", "cannot report"),
    Hostile("kill_the_driver", fn("os.kill(os.getppid(), 9)\nreturn " + RIGHT, "import os"), "crash"),
    Hostile("kill_everything", fn("os.kill(-1, 9)\nreturn " + RIGHT, "import os"), "crash"),
    # --- crashes --------------------------------------------------------------------------------
    Hostile("segfault", fn("ctypes.string_at(0)", "import ctypes"), "crash", "SIGSEGV"),
    Hostile("abort", fn("os.abort()", "import os"), "crash", "SIGABRT"),
    Hostile("runaway_recursion", fn("return param_count(d, n_layers + 1, vocab_size)"), "error", "RecursionError"),
    Hostile(
        "recursion_with_the_limit_lifted",
        fn("sys.setrecursionlimit(10**9)\ndef f(n):\n    return f(n + 1) + 1\nreturn f(0)", "import sys"),
        # Python 3.11 frames live on the heap: the recursion eats memory, not C stack. It fills
        # 512 MB a frame at a time, slowly: with other tests' containers on the same two cores
        # (make test's parallel workers) the 5 s time limit can come first. Contained either way.
        "memory_limit|timeout",
        gvisor=("memory_limit|timeout", ""),  # as memory_list_flood
    ),
    Hostile(
        "c_stack_overflow",
        fn(
            "sys.setrecursionlimit(10**9)\nx = []\nfor _ in range(1_000_000):\n    x = [x]\nreturn len(repr(x))",
            "import sys",
        ),
        "crash",
        "SIGSEGV",
    ),
    Hostile(
        "raise_own_limits",
        fn(
            "resource.setrlimit(resource.RLIMIT_NPROC, (10**6, 10**6))\nresource.setrlimit(resource.RLIMIT_FSIZE, (-1, -1))\nreturn "
            + RIGHT,
            "import resource",
        ),
        "error",
        "ValueError",
    ),
    # --- JAX, under a JAX exercise's own limits --------------------------------------------------
    Hostile(
        "jax_compile_bomb",
        jax_fn(
            "def body(x):\n    for i in range(200_000):\n        x = jnp.sin(x) * 1.0001 + i\n    return x\n"
            "return jax.jit(body)(jnp.ones(3))"
        ),
        "timeout",
        target=JAX,
    ),
    Hostile(
        "jax_allocation_bomb",
        jax_fn("x = jnp.ones((40_000, 40_000), dtype=jnp.float32)\nreturn x.sum() + jnp.zeros(len(xs))"),
        "memory_limit",
        target=JAX,
    ),
]


@pytest.mark.parametrize("hostile", HOSTILE, ids=str)
def test_hostile_submission_cannot_pass_or_harm(hostile: Hostile, sandbox: Sandbox, reference: SolutionReader) -> None:
    target = hostile.target
    attempt = sandbox.code(target.number, hostile.source, workbook=target.workbook)
    details = attempt.details
    shown = " ".join(
        [attempt.feedback, details.get("message", ""), details.get("traceback", "")]
        + [t.get("message", "") for t in details.get("tests", [])]
    )
    assert attempt.status == AttemptStatus.GRADED, (attempt.status, shown[:2000])
    assert attempt.outcome in hostile.outcome.split("|"), (attempt.outcome, shown[:2000])
    assert attempt.verdict == Verdict.INCORRECT
    assert hostile.says in shown, shown[:2000]
    assert "\x00" not in shown
    progress = sandbox.progress(target.number, workbook=target.workbook)
    assert progress is not None and progress.attempts == 1 and not progress.solved
    # The worker is unharmed, and the next (honest) submission is graded right.
    assert sandbox.worker.alive()
    honest = sandbox.code(
        target.number, reference(target.reference, workbook=target.workbook), workbook=target.workbook
    )
    assert (honest.outcome, honest.verdict) == ("passed", Verdict.CORRECT), honest.details


def test_there_are_at_least_thirty_hostile_submissions() -> None:
    assert len(HOSTILE) >= 30
    assert len({h.name for h in HOSTILE}) == len(HOSTILE)
