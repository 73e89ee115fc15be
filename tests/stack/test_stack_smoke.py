"""The compose stack as an operator meets it: `scripts/stack.sh up` (what `make stack` runs) on a
project name and port of its own, an account made with `create_account`, a numeric and a code
exercise answered over HTTP, a `docker kill`ed sandbox worker coming back, then `down -v --rmi all`.

Needs Docker and docker-compose (or `docker compose`): without them this fails (it is part of
`make test`), it does not skip. From no stack images it takes about 5.5 minutes on 2 cores: the
base image by debootstrap ~1 min, the web/postgres/redis images ~3.5 min, the stack's start ~1 min,
the rest under 30 s. Every image is keyed by its inputs (deploy/build-images.sh): while they are
unchanged a later run tags the images an earlier one built with its own project name instead of
building them, and the test takes about a minute. The sandbox image is the one `make test` built
(SANDBOX_IMAGE); `down --rmi all` removes this run's project tags and leaves the keyed images.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from apps.exercises.content.loader import load_workbook
from apps.exercises.content.resolve import resolve

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack")]

ROOT = Path(__file__).resolve().parents[2]
WORKBOOK = ROOT / "fixtures" / "workbooks" / "transformer-math"
NUMERIC = "0.2"  # LLaMA 7B's count: about one published model, the same numbers for everyone
CODE = ("0.5", "0.5-param-count")
BUILD_TIMEOUT_S = 1500  # a first build: base image by debootstrap, wheels, compose build
COMMAND_TIMEOUT_S = 300
NOT_PASSED = (
    "DJANGO_",
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_",
    "EMAIL_",
    "DEFAULT_FROM_EMAIL",
    "SANDBOX_",
    "COMPOSE_",
    "DOCKER_GID",
    "BASE_IMAGE",
    "MLSYS_",
    "PYTEST_",
)


@dataclass
class Stack:
    env: dict[str, str]
    url: str
    log: list[str]
    keyed: list[str] = field(default_factory=list)  # the images keyed by their inputs that `up` used

    def attempt(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """scripts/stack.sh ARGS, whatever its exit code."""
        return _sh([str(ROOT / "scripts" / "stack.sh"), *args], env=self.env, timeout=timeout)

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> str:
        """scripts/stack.sh ARGS; its output, or a failure that shows it."""
        started = time.monotonic()
        done = self.attempt(*args, timeout=timeout)
        if args[0] in ("up", "down"):
            # Timings for the report (`pytest -s` prints them): the build's parts and the wait.
            parts = re.findall(r"^== done: (.*)$|^stack: (healthy after \d+s)", done.stdout + done.stderr, re.MULTILINE)
            details = ", ".join(a or b for a, b in parts)
            self.log.append(f"{args[0]} {time.monotonic() - started:.0f}s" + (f" ({details})" if details else ""))
        if done.returncode != 0:
            pytest.fail(f"scripts/stack.sh {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`python manage.py ARGS` in the web container, as deploy/README.md documents it."""
        return self.attempt("compose", "exec", "-T", "web", "python", "manage.py", *args)

    def container(self, service: str) -> str:
        return self.run("compose", "ps", "-q", service).strip()


def _sh(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)  # noqa: S603


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if shutil.which("docker") is None:
        pytest.fail("the stack smoke test needs Docker and docker-compose (it is part of make test; it does not skip)")
    # No Engine, or no compose: scripts/stack.sh says which, and the test fails with its words.
    sandbox_image = os.environ.get("SANDBOX_IMAGE") or (ROOT / "var" / "sandbox-image").read_text().strip()
    port = _free_port()
    # What an operator's shell would hold (PATH, pip's and the proxy's settings...), without the
    # test settings and anything that would choose another stack.
    env = {k: v for k, v in os.environ.items() if not k.startswith(NOT_PASSED) and k not in NOT_PASSED}
    env |= {
        "COMPOSE_PROJECT_NAME": f"mlsys-smoke-{secrets.token_hex(4)}",
        "MLSYS_PORT": str(port),
        "MLSYS_ENV_FILE": str(tmp_path_factory.mktemp("stack") / "stack.env"),
        "SANDBOX_IMAGE": sandbox_image,
        "MLSYS_WAIT_S": "420",
    }
    built = Stack(env=env, url=f"http://127.0.0.1:{port}", log=[])
    try:
        up = built.run("up", timeout=BUILD_TIMEOUT_S)
        built.keyed = re.findall(r"^KEYED_IMAGES=(.*)$", up, re.MULTILINE)[-1].split()
        yield built
    finally:
        built.run("down", "--volumes", "--rmi", "all", "--remove-orphans")
        print("stack timings:", "; ".join(built.log))
    project = env["COMPOSE_PROJECT_NAME"]
    named = _sh(["docker", "image", "ls", "-q", f"{project}-*"])
    untagged = _sh(
        ["docker", "image", "ls", "-q", "--filter", "dangling=true", "--filter", f"label=mlsys.web-image-of={project}"]
    )
    assert (named.stdout, untagged.stdout) == ("", ""), f"down --rmi all left this project's images: {named} {untagged}"
    # What stays is the images keyed by their inputs (mlsys-web:<hash>, ...): the next build of the
    # same inputs, by any project, tags them instead of building again (deploy/build-images.sh).
    assert len(built.keyed) == 3, built.keyed
    for image in built.keyed:
        assert _sh(["docker", "image", "inspect", image]).returncode == 0, f"{image} was removed"


def _poll(session: requests.Session, url: str, timeout: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = session.get(url, timeout=10).json()
        if body["status"] in ("graded", "not_graded"):
            return body
        time.sleep(0.5)
    raise AssertionError(f"{url} had no verdict after {timeout:.0f}s")


def _wait_healthy(stack: Stack, service: str, timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        container = stack.container(service)
        if container:
            state = _sh(["docker", "inspect", "-f", "{{.State.Status}}/{{.State.Health.Status}}", container])
            if state.stdout.strip() == "running/healthy":
                return time.monotonic() - started
        time.sleep(1)
    raise AssertionError(f"{service} was not healthy again within {timeout:.0f}s")


def test_a_learner_answers_through_the_stack_and_a_killed_sandbox_worker_returns(stack: Stack) -> None:
    # Accounts: the documented command, with a generated password.
    created = stack.manage("create_account", "smoke", "--role", "learner")
    match = re.search(r"^password: (\S+)$", created.stdout, re.MULTILINE)
    assert created.returncode == 0 and match is not None, created
    again = stack.manage("create_account", "smoke", "--role", "author")
    assert again.returncode != 0 and "An account named 'smoke' already exists" in again.stderr, again

    api = f"{stack.url}/api/v1"
    session = requests.Session()
    token = session.post(f"{api}/auth/token/", json={"username": "smoke", "password": match.group(1)}, timeout=10)
    assert token.status_code == 200, token.text
    assert token.json()["user"]["role"] == "student"
    session.headers["Authorization"] = f"Token {token.json()['token']}"

    # A numeric answer, computed from the content files as check_content does.
    spec = load_workbook(WORKBOOK, chapter_glob="00-*", compute_expected=False)
    exercise = next(e for c in spec.chapters for e in c.exercises if e.number == NUMERIC)
    answer = resolve(exercise).answer_text
    assert answer is not None
    numeric = session.post(
        f"{api}/workbooks/transformer-math/exercises/{NUMERIC}/attempts/", json={"answer": answer}, timeout=10
    )
    assert numeric.status_code == 201, numeric.text
    assert numeric.json()["verdict"] == "correct"

    # A code answer: the reference solution, graded by the sandbox worker in a sandbox container.
    number, folder = CODE
    detail = session.get(f"{api}/workbooks/transformer-math/exercises/{number}/", timeout=10).json()
    assert detail["widget"]["sandbox_available"] is True, detail["widget"]
    solution = (WORKBOOK / "code" / folder / "solution.py").read_text()
    code = session.post(
        f"{api}/workbooks/transformer-math/exercises/{number}/attempts/", json={"code": solution}, timeout=10
    )
    assert code.status_code == 202, code.text
    graded = _poll(session, stack.url + code.json()["url"])
    assert (graded["verdict"], graded["outcome"]) == ("correct", "passed"), graded

    # Redis keeps the queue on disk.
    aof = stack.run("compose", "exec", "-T", "redis", "redis-cli", "config", "get", "appendonly")
    assert aof.split() == ["appendonly", "yes"], aof

    # `docker kill` is not undone by Docker's restart policy; the watchdog starts the worker again.
    worker = stack.container("sandbox-worker")
    killed = _sh(["docker", "kill", worker])
    assert killed.returncode == 0, killed
    back = _wait_healthy(stack, "sandbox-worker", timeout=90)
    stack.log.append(f"sandbox worker healthy {back:.0f}s after docker kill")
    assert stack.container("sandbox-worker") == worker  # the same container, started again
