"""Fixtures of the fault drills: one private stack per session (tests/drills/stack.py), healthy before each drill.

The stack is started once (about 10 s: initdb, migrate, sync_content, gunicorn); each drill gets
learners of its own, starts the sandbox workers it needs, and leaves every service up again: a drill
that leaves something broken fails the next one's health check, naming what.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from apps.sandbox.tests.worker import ROOT
from tests.drills.client import Learner
from tests.drills.stack import PASSWORD, RUN_ID, Stack, build_stack

REPORT = ROOT / "var" / "drills.json"


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    built = build_stack()
    try:
        yield built
    finally:
        built.down()
        REPORT.parent.mkdir(exist_ok=True)
        # The root conftest's terminal summary prints it.
        REPORT.write_text(json.dumps(built.timings, indent=2, sort_keys=True) + "\n")


@pytest.fixture
def healthy(stack: Stack, request: pytest.FixtureRequest) -> Iterator[Stack]:
    """The stack with every service up and no worker; afterwards, this drill's workers stopped."""
    if not stack.pg.up():
        stack.pg.start()
    if not stack.redis.up():
        stack.redis.start()
    if stack.web is None or stack.web.poll() is not None:
        stack.start_web()
    started = time.monotonic()
    try:
        yield stack
    finally:
        stack.stop_workers()
        stack.timings[f"{request.node.name}_s"] = round(time.monotonic() - started, 1)


@pytest.fixture
def learner(healthy: Stack, request: pytest.FixtureRequest) -> Iterator[Learner]:
    """A learner of this drill alone, with an API token (fetched while Redis is up: login needs it)."""
    username = f"{RUN_ID}-{request.node.name}"[:150]
    out = healthy.manage(
        "shell", "-c",
        "from apps.accounts import services\n"
        f"print(services.user_create(username={username!r}, password={PASSWORD!r}).pk)",
    )  # fmt: skip
    user_id = int(out.strip().splitlines()[-1])
    token = httpx.post(
        f"{healthy.base_url}/api/v1/auth/token/", json={"username": username, "password": PASSWORD}, timeout=10
    )
    assert token.status_code == 200, token.text[:500]
    client = httpx.Client(
        base_url=healthy.base_url, headers={"Authorization": f"Token {token.json()['token']}"}, timeout=30
    )
    try:
        yield Learner(username, user_id, client)
    finally:
        client.close()
