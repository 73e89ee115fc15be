"""The OpenAPI schema is the contract: schemathesis fuzzes the live server against it.

Every check is on (server errors, status codes, content types, response schemas and headers,
positive and negative data, unsupported methods, stateful links, use-after-free and resource
availability, ignored auth), as a learner, an instructor and an anonymous caller, on PostgreSQL.
schemathesis.toml at the repository root says what no schema can (400s that depend on data).
The run is bounded by examples per operation, not by time, so it is the same run every time
(fixed seed). A deliberate lie in the schema must turn it red (the last test).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.contract.conftest import Callers

ROOT = Path(__file__).resolve().parents[2]
SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
MAX_EXAMPLES = 5
SEED = 17

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("contract")]


def schemathesis(url: str, schema: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        SCHEMATHESIS, "--config-file", str(ROOT / "schemathesis.toml"), "run", schema, "--url", url,
        "--checks", "all", "--max-examples", str(MAX_EXAMPLES), "--seed", str(SEED), "--no-color",
        "--workers", "1", "--wait-for-schema", "30", *args,
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)  # noqa: S603
    print(f"schemathesis {' '.join(args)}: {time.monotonic() - started:.1f} s")
    print(done.stdout[-3000:])
    return done


def _schema_url(callers: Callers) -> str:
    return f"{callers.url}/api/schema/?format=json"


@pytest.mark.parametrize("caller", ["learner", "instructor", "anonymous"])
def test_the_server_keeps_the_schemas_promises(contract_server: Callers, caller: str) -> None:
    # The coverage phase (every boundary value of every parameter) is the slow one: it runs for the
    # learner, whose view reaches every operation; the instructor (who can do all a learner can)
    # and the anonymous caller get the fuzzing phase. Every check runs in every phase. One worker:
    # CPython 3.11 compiles regexes and ASTs unsafely across threads ("AST constructor recursion
    # depth mismatch" was seen with two).
    phases = "examples,coverage,stateful" if caller == "learner" else "examples,fuzzing,stateful"
    args: list[str] = ["--phases", phases]
    if caller != "anonymous":
        token = getattr(contract_server, caller)
        # Signing out (here or everywhere) would end the run's own token: those are fuzzed anonymously.
        args += ["-H", f"Authorization: Token {token}"]
        args += ["--exclude-operation-id-regex", "^auth_tokens?_destroy$"]
    done = schemathesis(contract_server.url, _schema_url(contract_server), *args)
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-2000:]


def test_a_lie_in_the_schema_turns_the_run_red(contract_server: Callers, tmp_path: Path) -> None:
    with urllib.request.urlopen(_schema_url(contract_server)) as answer:  # noqa: S310 - our live server
        schema = json.load(answer)
    # The lie: `GET /me/` documented as answering a list.
    ok = schema["paths"]["/api/v1/me/"]["get"]["responses"]["200"]["content"]["application/json"]
    ok["schema"] = {"type": "array", "items": {"type": "integer"}}
    lie = tmp_path / "schema.json"
    lie.write_text(json.dumps(schema))
    token = contract_server.learner
    done = schemathesis(
        contract_server.url, str(lie), "-H", f"Authorization: Token {token}", "--include-operation-id", "me_retrieve"
    )
    assert done.returncode != 0
    assert "Response violates schema" in done.stdout
    assert "GET /api/v1/me/" in done.stdout
