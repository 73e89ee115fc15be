"""The project as a whole: layout, settings per environment, Celery, the two commands' paths."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PROD_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
    "DJANGO_ALLOWED_HOSTS": "workbooks.example.org",
    "DATABASE_URL": "postgres://mlsys@127.0.0.1:54329/mlsys",
    "REDIS_URL": "redis://127.0.0.1:63799/0",
    "EMAIL_HOST": "smtp.example.org",
    "DEFAULT_FROM_EMAIL": "ML-systems workbooks <noreply@example.org>",
}


def run(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    drop = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    base = {k: v for k, v in os.environ.items() if k not in drop}
    return subprocess.run(args, cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=timeout)  # noqa: S603


def test_the_project_package_does_not_shadow_the_standard_library() -> None:
    code = (
        "import django, celery, config, config.celery_app, platform, uuid; "
        "print(platform.system(), celery.__version__ is not None, uuid.uuid4().version)"
    )
    result = run([sys.executable, "-c", code], {"DJANGO_SETTINGS_MODULE": "config.settings.test"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Linux", "True", "4"]
    assert not (ROOT / "platform").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY must be set"),
        ({"DJANGO_SECRET_KEY": "dev-insecure-secret-key-change-me"}, "DJANGO_SECRET_KEY must be set"),
        ({"DJANGO_DEBUG": "true"}, "DEBUG must be off"),
        ({"DJANGO_ALLOWED_HOSTS": ""}, "DJANGO_ALLOWED_HOSTS must list"),
        ({"DJANGO_ALLOWED_HOSTS": "*"}, "DJANGO_ALLOWED_HOSTS must list"),
        ({"DATABASE_URL": ""}, "DATABASE_URL must point"),
        ({"REDIS_URL": ""}, "REDIS_URL must point"),
        ({"DEFAULT_FROM_EMAIL": ""}, "DEFAULT_FROM_EMAIL must be set with EMAIL_HOST"),
    ],
)
def test_production_settings_refuse_unsafe_configuration(change: dict[str, str], message: str) -> None:
    result = run([sys.executable, "manage.py", "check"], {**PROD_ENV, **change})
    assert result.returncode != 0
    assert message in result.stderr


def test_check_deploy_is_clean_under_production_settings() -> None:
    result = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], PROD_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_embedded_default_uses_sqlite_and_in_process_celery() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings as s; from config import celery_app as c; "
        "import json; print(json.dumps([s.DATABASES['default']['ENGINE'], c.conf.task_always_eager, "
        "c.conf.broker_url, s.CACHES['default']['BACKEND']]))"
    )
    result = run([sys.executable, "-c", code], {"DJANGO_SETTINGS_MODULE": "config.settings.local"})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [
        "django.db.backends.sqlite3",
        True,
        "memory://",
        "django.core.cache.backends.locmem.LocMemCache",
    ]


def test_with_urls_it_uses_postgres_and_a_real_redis_broker() -> None:
    from django.conf import settings

    from config.celery_app import app

    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
    assert app.conf.broker_url.startswith("redis://127.0.0.1:")
    assert app.conf.task_always_eager is False
    assert app.conf.task_acks_late is True
    assert app.conf.worker_prefetch_multiplier == 1
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1)  # a real Redis answers
        assert connection.connected


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_make_run_path_serves_the_platform_on_the_embedded_default(tmp_path: Path) -> None:
    """What `make run` does (scripts/run.sh) — migrate, collect static files, sync, demo users, serve
    (DEBUG off) — on SQLite with no services; the demo accounts are the last thing it prints."""
    # A directory that does not exist yet, as var/ on a fresh clone.
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.local", "SQLITE_PATH": str(tmp_path / "var" / "db.sqlite3")}
    static_root = tmp_path / "static"
    env["STATIC_ROOT"] = str(static_root)
    setup = (["migrate", "--noinput"], ["collectstatic", "--noinput", "-v0"], ["sync_content"], ["seed_demo", "-v0"])
    for command in setup:
        result = run([sys.executable, "manage.py", *command], env)
        assert result.returncode == 0, result.stderr
    port = _free_port()
    printed = tmp_path / "serve_demo.out"
    server = subprocess.Popen(  # noqa: S603
        [sys.executable, "manage.py", "serve_demo", "--noreload", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env={**{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}, **env},
        stdout=printed.open("w"),
        stderr=subprocess.DEVNULL,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            for _ in range(100):
                try:
                    client.get("/")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            token = client.post(
                "/api/v1/auth/token/", json={"username": "student", "password": "student-demo-pass"}
            ).json()["token"]
            result = client.post(
                # 0.2 (LLaMA 7B's count) has the same numbers for every learner.
                "/api/v1/workbooks/transformer-math/exercises/0.2/attempts/",
                json={"answer": "6.738B"},
                headers={"Authorization": f"Token {token}"},
            ).json()
            assert result["verdict"] == "correct"
            assert result["state"]["solved_at"].endswith("Z")  # aware, from the SQLite upsert path
            # Code runs in the sandbox on a thread of the server (Docker on this machine): the POST
            # answers at once, queued, and the attempt is graded off the request.
            solution = (ROOT / "fixtures/workbooks/transformer-math/code/0.5-param-count/solution.py").read_text()
            response = client.post(
                "/api/v1/workbooks/transformer-math/exercises/0.5/attempts/",
                json={"code": solution},
                headers={"Authorization": f"Token {token}"},
                timeout=60,
            )
            assert response.status_code == 202
            assert response.json()["status"] in ("queued", "running"), response.json()
            deadline = time.monotonic() + 60
            attempt = response.json()
            while attempt["status"] in ("queued", "running") and time.monotonic() < deadline:
                time.sleep(0.2)
                attempt = client.get(attempt["url"], headers={"Authorization": f"Token {token}"}).json()
            assert (attempt["status"], attempt["outcome"]) == ("graded", "passed"), attempt
            code_state = client.get(
                "/api/v1/workbooks/transformer-math/exercises/0.5/", headers={"Authorization": f"Token {token}"}
            ).json()["state"]
            assert code_state["solved"] is True
            # Streak, points and the demo cohort's board, on SQLite too.
            auth = {"Authorization": f"Token {token}"}
            streak = client.get("/api/v1/streak/", headers=auth).json()
            assert (streak["current"], streak["solves"]) == (1, 2), streak
            (cohort,) = client.get("/api/v1/cohorts/", headers=auth).json()
            board = client.get(f"/api/v1/leaderboard/?scope=cohort&cohort={cohort['id']}", headers=auth).json()
            assert board["me"]["rank"] == 1 and board["me"]["points"] == streak["points"] > 0
            assert client.get("/api/v1/leaderboard/?period=week", headers=auth).json()["me"]["rank"] == 1
            home = client.get("/")
            assert "Transformer Math" in home.text
            assert "script-src 'self'" in home.headers["Content-Security-Policy"]
            # DEBUG is off: static files come from collectstatic through WhiteNoise, and a body over
            # the upload limit is the API's JSON error, not Django's debug page.
            assert client.get("/static/css/site.css").status_code == 200
            big = client.post(
                "/api/v1/auth/token/", content=b"x" * 3_000_000, headers={"Content-Type": "application/json"}
            )
            assert big.status_code == 413 and big.headers["Content-Type"] == "application/json", big.text[:200]
            assert big.json()["error"]["code"] == "too_large"
            missing = client.get("/no/such/page/")
            assert missing.status_code == 404 and "Traceback" not in missing.text and "DEBUG" not in missing.text
    finally:
        server.terminate()
        server.wait(timeout=10)
    # After the server's banner, the last lines: every role's account with its password.
    banner, _, last = printed.read_text().partition(f"Starting development server at http://127.0.0.1:{port}/")
    assert "Performing system checks" in banner
    tail = last.strip().splitlines()
    assert tail[-1].startswith(f"Open http://127.0.0.1:{port}/"), tail
    accounts = {line.split("username=")[0].strip(): line for line in tail if "username=" in line}
    assert list(accounts) == ["learner", "instructor", "admin and author"], tail
    for role, username, password in (
        ("learner", "student", "student-demo-pass"),
        ("instructor", "instructor", "instructor-demo-pass"),
        ("admin and author", "author", "author-demo-pass"),
    ):
        assert f"username={username} " in accounts[role] and f"password={password}" in accounts[role], tail


@pytest.mark.slow
def test_compose_file_describes_the_production_stack(tmp_path: Path) -> None:
    compose = shutil.which("docker-compose")
    if compose is None:
        docker = shutil.which("docker")
        assert docker is not None, "docker is part of this machine kind"
        args = [docker, "compose"]
    else:
        args = [compose]
    # Not the operator's .env (`make stack` writes one): an empty env file, and only these values.
    (tmp_path / "empty.env").write_text("")
    args += ["--env-file", str(tmp_path / "empty.env")]
    required = {"DJANGO_SECRET_KEY": "x" * 60, "POSTGRES_PASSWORD": "pw", "DOCKER_GID": "", "COMPOSE_PROJECT_NAME": ""}
    # Without the Docker socket's group the file refuses to load (a guess left grading dead).
    refused = run([*args, "config"], required)
    assert refused.returncode != 0 and "set DOCKER_GID" in refused.stderr
    result = run([*args, "config"], {**required, "DOCKER_GID": "105", "COMPOSE_PROJECT_NAME": "proj"})
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert set(services) == {"web", "worker", "sandbox-worker", "sandbox-watchdog", "beat", "postgres", "redis"}
    # Only the sandbox worker and its watchdog reach the Docker Engine, and neither is published.
    on_socket = [name for name, s in services.items() if "/var/run/docker.sock" in str(s.get("volumes"))]
    assert sorted(on_socket) == ["sandbox-watchdog", "sandbox-worker"]
    assert [name for name, s in services.items() if s.get("ports")] == ["web"]
    # Images are the project's own; only web builds the Django image the others run.
    assert {s["image"] for s in services.values()} == {"proj-web:latest", "proj-postgres:latest", "proj-redis:latest"}
    assert sorted(name for name, s in services.items() if "build" in s) == ["postgres", "redis", "web"]
    assert "BASE_IMAGE" in result.stdout or "base_image" in result.stdout.lower()
    assert "gunicorn" in result.stdout or "deploy/web/Dockerfile" in result.stdout


def test_migrations_match_the_models() -> None:
    result = run(
        [sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"],
        {"DJANGO_SETTINGS_MODULE": "config.settings.test"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
