"""Deadline burst: many learners answering at once, on the production shape as local processes.

    make bench-burst      # or: DATABASE_URL=postgres://... .venv/bin/python bench/burst.py [--quick]

The system under test: gunicorn (``config.wsgi``, 2 sync workers: the deployed default,
``GUNICORN_WORKERS``, one per core of this machine) + PostgreSQL (a private database
``<name>_burst`` beside the database ``<name>`` of DATABASE_URL, dropped first if left over,
migrated and synced here, every workbook) + a private ``redis-server`` started by this script on a
free port (cache on db 0, broker on db 1) + a real sandbox worker (``celery -A config worker -Q
sandbox -c 2``, the image in SANDBOX_IMAGE or var/sandbox-image). No default-queue worker or beat:
grading enqueues nothing but ``grade_code_attempt``, which goes to the sandbox queue. Settings are
``bench.settings_burst``: the test settings (the throttle rates are high, so the limiter never
answers 429 and does not dominate), with ``lock_timeout`` = 1 s on every database session, so that
zero errors proves no lock wait went over 1 s and no deadlock happened; a sampler also reads
``pg_locks`` every 200 ms for sessions waiting on a lock and reports the longest wait it saw.

Two traffic modes (``--modes``; both by default, one after the other, each with its own learners
and reported on its own):

- **fixed**: the first 3-6 of six numeric and choice exercises of transformer-math that do not
  vary, in order, the same numbers for every learner (so they contend on the same leaderboard
  buckets, and ten cohorts' weekly boards);
- **own**: each learner on their own numbers: a run of 3-6 consecutive exercises among every
  varying exercise graded on the spot, in every workbook (numeric, choice, parts), the runs'
  starts spread so that the learners between them answer every one. Each exercise is a first
  visit: its GET resolves and renders the learner's numbers, the POST grades on them. The bodies
  (right and wrong) are worked out before the run from each learner's variant as the API tests
  do (apps/exercises/tests/answers.py), never read through the API.

The load of each mode, from one asyncio process (httpx), learners authenticated by API token:

1. idle: ``--idle`` grading POSTs one at a time, after a warm-up, by a series of learners each
   working through a plan as the burst's learners do (the exercise's GET on opening it, wrong
   answers, right answers, first solves with their streak and leaderboard writes), so that the
   idle mix is the burst's mix without the concurrency;
2. burst: ``--learners`` learners, each arriving at a random time in a ``--window`` window: open
   the exercise, think, maybe a wrong answer first, then (nine times in ten) the right one.
   ``--code`` code submissions spread over the same window, on four Build exercises: the
   reference solution or one of the content's known-wrong ones, each polled every 100 ms until
   its verdict;
3. idle again, with fresh learners: the two idle figures bracket the burst.

Then, once: saturation, ``--saturate`` seconds of closed-loop grading POSTs (fixed numbers) from 8
concurrent clients (no think time), for the throughput at which the two workers are busy:
capacity per core.

Then, per mode, every answer the client got a 2xx for is checked in the database (exactly once, on
the exercise it was sent to, and each verdict as expected), every accepted code attempt must be
final, and the boards must add up. Prints a table and writes var/bench/burst.json. ``--quick``: 30
learners and 10 code submissions per mode, a 20 s window, 5 s of saturation.

``--profile``: the web processes profile the exercise GET and the grading POST (cProfile, CPU
time; bench/settings_burst.py) and the report says, per request, what the variant path costs:
the learner's numbers read and drawn, resolving, rendering; the merged profiles are kept in
var/bench/burst-profile-{get,post}.prof. Profiling slows the server: its latencies are not the
benchmark's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlparse, urlunparse

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.grading_api import free_port, percentile  # noqa: E402 - after the path is set

SETTINGS = "bench.settings_burst"
WORKBOOK = "transformer-math"  # the fixed mode's exercises, the Build exercises, the cohorts' workbook
POOL_SIZE = 6  # the numeric and choice exercises every learner works through, in workbook order
MODES = ("fixed", "own")  # the seed's numbers for everyone; each learner's own numbers
BUILD = ["0.5", "1.6", "5.2", "5.4"]  # Build exercises with a reference solution and known-wrong ones
COHORTS = 10
GUNICORN_WORKERS = 2
SANDBOX_CONCURRENCY = 2
SATURATION_CLIENTS = 8
POLL_S = 0.1
VERDICT_DEADLINE_S = 180  # a verdict later than this is reported as never final (the lease is 30 s)
FINAL = ("graded", "not_graded")
PASSWORD = "bench-pass-12345"  # noqa: S105 - scratch accounts
TARGET_RATIO = 3.0  # burst p95 / idle p95, the fixed numbers
TARGET_RATIO_OWN = 2.0  # the same on learners' own numbers (issue 34)


# ---- processes ----------------------------------------------------------------------------------


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path


@dataclass
class Procs:
    """Every process this script starts, each in its own process group, stopped in reverse order."""

    logs: Path
    started: list[Proc] = field(default_factory=list)

    def spawn(self, name: str, cmd: list[str], env: dict[str, str]) -> Proc:
        log = self.logs / f"{name}.log"
        with log.open("wb") as handle:
            popen = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
            )
        proc = Proc(name, popen, log)
        self.started.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in reversed(self.started):
            stop(proc.popen, grace_s=60 if proc.name == "sandbox-worker" else 15)
        self.started.clear()


def stop(popen: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to the process group (a graceful stop: celery finishes its runs), then SIGKILL."""
    if popen.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(popen.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(popen.pid, signal.SIGKILL)  # stragglers of the group (pool processes)
    popen.wait()


def group_cpu_s(pgid: int) -> float:
    """User + system CPU seconds of the live processes in a process group."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the name: state ppid pgrp ...; utime, stime at 11, 12
            total += int(fields[11]) + int(fields[12])
    return total / tick


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs since boot."""
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return float(sum(parts) - idle), float(sum(parts))


# ---- database -----------------------------------------------------------------------------------


def private_database(url: str) -> tuple[str, str, str]:
    """A fresh ``<name>_burst`` beside the database ``<name>`` in ``url`` (so that runs against
    different databases of one server stay apart); returns its name, its URL and the admin URL."""
    parsed = urlparse(url)
    name = f"{parsed.path.lstrip('/') or 'mlsys'}_burst"
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, urlunparse(parsed._replace(path=f"/{name}")), admin


class LockSampler(threading.Thread):
    """Every 200 ms: the sessions of the bench database waiting on a lock, and for how long."""

    QUERY = """
        SELECT a.pid, extract(epoch FROM l.waitstart), extract(epoch FROM clock_timestamp() - l.waitstart),
               left(a.query, 200)
        FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
        WHERE a.datname = current_database() AND a.wait_event_type = 'Lock'
    """

    def __init__(self, url: str) -> None:
        super().__init__(name="lock-sampler", daemon=True)
        self.url = url
        self.halt = threading.Event()
        self.samples = 0
        self.samples_waiting = 0
        self.episodes: set[tuple[int, float]] = set()
        self.max_wait_s = 0.0
        self.max_wait_query = ""

    def run(self) -> None:
        with psycopg.connect(self.url, autocommit=True, application_name="burst-lock-sampler") as conn:
            while not self.halt.wait(0.2):
                rows = conn.execute(self.QUERY).fetchall()
                self.samples += 1
                self.samples_waiting += bool(rows)
                for pid, since, waited, query in rows:
                    waited = float(waited or 0.0)
                    self.episodes.add((pid, float(since or 0.0)))
                    if waited > self.max_wait_s:
                        self.max_wait_s, self.max_wait_query = waited, query

    def report(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "samples_with_a_waiter": self.samples_waiting,
            "wait_episodes_seen": len(self.episodes),
            "max_wait_ms": round(self.max_wait_s * 1000, 1),
            "max_wait_query": self.max_wait_query,
        }


def deadlocks(admin_url: str, name: str) -> int:
    with psycopg.connect(admin_url, autocommit=True) as conn:
        row = conn.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = %s", [name]).fetchone()
    return int(row[0]) if row else 0


# ---- data (ORM, in this process) -----------------------------------------------------------------


@dataclass
class Learner:
    user_id: int
    token: str


@dataclass
class Task:
    """One answer a learner may send: the exercise, the body and whether it is right."""

    slug: str
    number: str
    body: dict[str, Any]
    right: bool

    @property
    def key(self) -> str:
        return f"{self.slug}/{self.number}"


@dataclass
class Content:
    pool: list[str]  # the fixed mode's exercise numbers (in WORKBOOK), in order
    right: dict[str, dict[str, Any]]
    wrong: dict[str, dict[str, Any]]
    code: dict[str, tuple[str, list[str]]]  # number -> (reference, known-wrong sources)
    varying: list[tuple[str, str]]  # (slug, number): every instant-graded varying exercise, in book order


def content() -> Content:
    from apps.exercises import selectors
    from apps.exercises.choices import AnswerFormat
    from apps.exercises.content import cache
    from apps.exercises.models import Exercise, Workbook
    from apps.exercises.tests.answers import correct_payload, wrong_payload

    workbook = selectors.workbook_get(slug=WORKBOOK)
    pool: list[str] = []
    right: dict[str, dict[str, Any]] = {}
    wrong: dict[str, dict[str, Any]] = {}
    for listed in selectors.exercise_list(workbook=workbook):
        if listed.format not in (AnswerFormat.NUMERIC, AnswerFormat.CHOICE):
            continue
        exercise = Exercise.objects.select_related("current_version", "chapter").get(pk=listed.pk)
        assert exercise.current_version is not None
        if cache.resolved(exercise.current_version).spec.vary is not None:
            continue  # its right answer differs per learner; one key serves every learner here
        pool.append(exercise.number)
        right[exercise.number], wrong[exercise.number] = correct_payload(exercise), wrong_payload(exercise)
        if len(pool) == POOL_SIZE:
            break
    # The own-numbers mode: every exercise whose numbers vary per learner and that is graded on the
    # spot (code goes to the sandbox), in every workbook.
    varying: list[tuple[str, str]] = []
    for book in Workbook.objects.filter(is_published=True).order_by("position", "slug"):
        for exercise in selectors.exercise_list(workbook=book).select_related("current_version"):
            version = exercise.current_version
            if version is None:
                continue
            spec = cache.resolved(version).spec
            if spec.vary is not None and spec.format != AnswerFormat.CODE and spec.code is None:
                varying.append((book.slug, exercise.number))
    code: dict[str, tuple[str, list[str]]] = {}
    for number in BUILD:
        exercise = Exercise.objects.select_related("current_version").get(
            workbook=workbook, number=number, is_active=True
        )
        (folder,) = (ROOT / "fixtures/workbooks" / WORKBOOK / "code").glob(f"{number}-*")
        wrongs = [p.read_text() for p in sorted((folder / "wrong").glob("*.py"))]
        code[number] = (correct_payload(exercise)["code"], wrongs)
    return Content(pool, right, wrong, code, varying)


def own_plans(learners: list[Learner], c: Content, seed: int) -> dict[int, list[Task]]:
    """Each learner's answers on their own numbers: a run of 3-6 consecutive varying exercises,
    the runs' starts spread evenly over all of them (so the learners between them visit every
    varying exercise once there are enough of them), sometimes wrong first. The bodies are worked
    out here, before the run, as the API tests do (apps/exercises/tests/answers.py): the learner's
    variant read from the database and resolved in this process, never through the API."""
    from apps.accounts.models import User
    from apps.exercises.models import Exercise
    from apps.exercises.tests.answers import correct_payload, variant_for, wrong_payload

    rng = random.Random(seed)
    n = len(c.varying)
    steps: dict[int, list[tuple[tuple[str, str], bool]]] = {}
    for i, learner in enumerate(learners):
        start = (i * n) // len(learners)
        run = [c.varying[(start + k) % n] for k in range(rng.randint(3, 6))]
        steps[learner.user_id] = []
        for key in run:
            if rng.random() < 0.45:
                steps[learner.user_id].append((key, False))
            steps[learner.user_id].append((key, rng.random() < 0.9))
    wanted = {key for plan in steps.values() for key, _ in plan}
    exercises = {
        (e.workbook.slug, e.number): e
        for e in Exercise.objects.filter(is_active=True).select_related("current_version", "chapter", "workbook")
        if (e.workbook.slug, e.number) in wanted
    }
    users = User.objects.in_bulk(list(steps))
    plans: dict[int, list[Task]] = {}
    for user_id, plan in steps.items():
        bodies: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
        for key, _ in plan:
            if key not in bodies:
                exercise = exercises[key]
                variant = variant_for(exercise, users[user_id])  # round 1: no progress yet
                bodies[key] = correct_payload(exercise, variant=variant), wrong_payload(exercise, variant=variant)
        plans[user_id] = [Task(*key, bodies[key][0] if right else bodies[key][1], right) for key, right in plan]
    return plans


def accounts(prefix: str, count: int, cohorts: list[str] | None = None) -> list[Learner]:
    from apps.accounts import services as account_services
    from apps.progress import services as progress_services

    made: list[Learner] = []
    for i in range(count):
        user = account_services.user_create(username=f"{prefix}{i:04d}", password=PASSWORD)
        token = account_services.auth_token_issue(user=user)
        if cohorts:
            progress_services.cohort_join(user=user, code=cohorts[i % len(cohorts)])
        made.append(Learner(user.pk, token.key))
    return made


def cohort_codes() -> list[str]:
    from apps.accounts import services as account_services
    from apps.accounts.models import Role
    from apps.exercises.models import Workbook
    from apps.progress import services as progress_services

    workbook = Workbook.objects.get(slug=WORKBOOK)
    zones = ["UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo", "Asia/Kolkata"]
    codes = []
    for i in range(COHORTS):
        teacher = account_services.user_create(username=f"teacher{i:02d}", password=PASSWORD, role=Role.INSTRUCTOR)
        cohort = progress_services.cohort_create(
            instructor=teacher, name=f"Cohort {i}", time_zone=zones[i % len(zones)], workbooks=[(workbook, None)]
        )
        codes.append(cohort.join_code)
    return codes


# ---- the client ---------------------------------------------------------------------------------


@dataclass
class Sent:
    """An answer the server accepted (2xx): checked against the database at the end."""

    user_id: int
    key: str  # slug/number
    right: bool
    code: bool


@dataclass
class Recorder:
    t0: float = 0.0
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter[tuple[str, str]] = field(default_factory=Counter)
    accepted: dict[int, Sent] = field(default_factory=dict)
    unconfirmed: Counter[int] = field(default_factory=Counter)  # POSTs with no answer, per user
    verdict_s: list[float] = field(default_factory=list)
    verdict_db_s: list[float] = field(default_factory=list)
    never_final: list[int] = field(default_factory=list)
    first: float = float("inf")
    last: float = 0.0
    done: int = 0
    code_sent: int = 0
    grade_times: list[tuple[float, float]] = field(default_factory=list)  # (start since t0, ms), burst
    intervals: list[dict[str, Any]] = field(default_factory=list)

    def count(self, kind: str, status: str) -> None:
        self.statuses[(kind, status)] += 1


class Client:
    def __init__(self, base: str, recorder: Recorder) -> None:
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=0)
        self.http = httpx.AsyncClient(base_url=base, timeout=30.0, limits=limits)
        self.rec = recorder

    async def call(
        self, kind: str, method: str, url: str, learner: Learner, body: dict[str, Any] | None = None
    ) -> httpx.Response | None:
        headers = {"Authorization": f"Token {learner.token}"}
        start = time.perf_counter()
        try:
            response = await self.http.request(method, url, json=body, headers=headers)
        except httpx.TransportError as exc:
            self.rec.count(kind, type(exc).__name__)
            if method == "POST":
                self.rec.unconfirmed[learner.user_id] += 1
            return None
        end = time.perf_counter()
        self.rec.first, self.rec.last = min(self.rec.first, start), max(self.rec.last, end)
        self.rec.done += 1
        self.rec.count(kind, str(response.status_code))
        if response.is_success:
            self.rec.latency[kind].append((end - start) * 1000)
            if kind == "grade":
                self.rec.grade_times.append((start - self.rec.t0, (end - start) * 1000))
        return response

    async def answer(self, kind: str, learner: Learner, task: Task, code: bool = False) -> Any:
        url = f"/api/v1/workbooks/{task.slug}/exercises/{task.number}/attempts/"
        response = await self.call(kind, "POST", url, learner, task.body)
        if response is None or not response.is_success:
            return None
        data = response.json()
        self.rec.accepted[int(data["id"])] = Sent(learner.user_id, task.key, task.right, code)
        return data

    async def open(self, kind: str, learner: Learner, task: Task) -> None:
        """The exercise's GET, as the page asks for it: the learner's numbers, prompt and widget."""
        await self.call(kind, "GET", f"/api/v1/workbooks/{task.slug}/exercises/{task.number}/", learner)


def plan(rng: random.Random, pool: list[str], c: Content) -> list[Task]:
    """A learner's answers: the first 3-6 pool exercises in order, sometimes wrong first."""
    tasks = []
    for number in pool[: rng.randint(3, min(6, len(pool)))]:
        if rng.random() < 0.45:
            tasks.append(Task(WORKBOOK, number, c.wrong[number], right=False))
        right = rng.random() < 0.9
        tasks.append(Task(WORKBOOK, number, c.right[number] if right else c.wrong[number], right=right))
    return tasks


async def work_through(
    client: Client, learner: Learner, tasks: list[Task], kinds: tuple[str, str], rng: random.Random | None = None
) -> int:
    """One learner's plan: open each exercise (its GET: on a varying exercise the learner's first
    visit resolves their numbers), then answer it. ``kinds``: what the GETs and POSTs are recorded
    as. With ``rng``, a learner's pace (reading, working out, typing); without, back to back."""
    opened = ""
    for task in tasks:
        if task.key != opened:
            opened = task.key
            await client.open(kinds[0], learner, task)
            if rng is not None:
                await asyncio.sleep(rng.uniform(1.0, 4.0))  # reads the exercise, works it out
        await client.answer(kinds[1], learner, task)
        if rng is not None:
            await asyncio.sleep(rng.uniform(0.5, 2.5))
    return len(tasks)


async def idle_phase(
    client: Client, learners: list[Learner], plans: dict[int, list[Task]], warmup: int, n: int, suffix: str
) -> None:
    """The burst's requests one at a time: learner after learner through their plan, GETs and
    POSTs; the first ``warmup`` POSTs (and the GETs before them) are not measured."""
    sent = 0
    measured = (f"exercise_get_{suffix}", f"grade_{suffix}")
    for learner in learners:
        tasks = plans[learner.user_id][: warmup + n - sent]
        head = max(0, min(len(tasks), warmup - sent))  # the part of this plan still in the warm-up
        if head:
            await work_through(client, learner, tasks[:head], ("warmup_get", "warmup"))
        if tasks[head:]:
            await work_through(client, learner, tasks[head:], measured)
        sent += len(tasks)
        if sent >= warmup + n:
            return
    raise RuntimeError("not enough idle learners for the idle requests")


async def burst_learner(client: Client, learner: Learner, at: float, seed: int, tasks: list[Task]) -> None:
    rng = random.Random(seed)
    await asyncio.sleep(max(0.0, at - (time.perf_counter() - client.rec.t0)))
    await work_through(client, learner, tasks, ("exercise_get", "grade"), rng)


async def burst_code(client: Client, learner: Learner, at: float, task: Task) -> None:
    await asyncio.sleep(max(0.0, at - (time.perf_counter() - client.rec.t0)))
    start = time.perf_counter()
    client.rec.code_sent += 1
    data = await client.answer("code_submit", learner, task, code=True)
    if data is None:
        client.rec.code_sent -= 1
        return
    deadline = start + VERDICT_DEADLINE_S
    while data.get("status") not in FINAL:
        if time.perf_counter() > deadline:
            client.rec.never_final.append(int(data["id"]))
            return
        await asyncio.sleep(POLL_S)
        response = await client.call("code_poll", "GET", data["url"], learner)
        if response is not None and response.is_success:
            data = response.json()
    client.rec.verdict_s.append(time.perf_counter() - start)


async def saturate(client: Client, learners: list[Learner], c: Content, seconds: float) -> tuple[int, float]:
    """Closed loop: each client sends its next answer as soon as the last one is answered."""
    stop_at = time.perf_counter() + seconds
    counts = [0] * len(learners)

    async def loop(i: int, learner: Learner) -> None:
        rng = random.Random(100 + i)
        while time.perf_counter() < stop_at:
            for task in plan(rng, c.pool, c):
                await client.answer("grade_saturated", learner, task)
                counts[i] += 1
                if time.perf_counter() >= stop_at:
                    return

    start = time.perf_counter()
    await asyncio.gather(*(loop(i, learner) for i, learner in enumerate(learners)))
    return sum(counts), time.perf_counter() - start


def backends_cpu_s(conn: psycopg.Connection[Any]) -> dict[int, float]:
    """CPU seconds of each PostgreSQL backend on the bench database (readable when we run as root
    or as the server's user; empty otherwise)."""
    pids = [r[0] for r in conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")]
    found = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            found[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


@dataclass
class CpuMeter:
    """Where the machine's CPU goes: ours (gunicorn, the sandbox worker, our PostgreSQL backends,
    this client) and the rest (the sandbox containers, Docker, and whatever else shares the machine)."""

    conn: psycopg.Connection[Any]
    groups: list[tuple[str, int]]
    # PostgreSQL backends come and go: CPU is accumulated per backend between snapshots (a
    # backend's last moments before it exits are missed; the ticker snaps every 10 s).
    backends: dict[int, float] = field(default_factory=dict)
    backends_total: float = 0.0

    def __post_init__(self) -> None:
        self.backends = backends_cpu_s(self.conn)

    def snap(self) -> dict[str, Any]:
        busy, total = machine_busy()
        now = backends_cpu_s(self.conn)
        self.backends_total += sum(v - self.backends.get(pid, 0.0) for pid, v in now.items())
        self.backends = now
        return {
            "t": time.perf_counter(), "busy": busy, "total": total, "own": time.process_time(),
            "groups": {name: group_cpu_s(pgid) for name, pgid in self.groups}, "pg": self.backends_total,
        }  # fmt: skip

    @staticmethod
    def diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        tick = os.sysconf("SC_CLK_TCK")
        wall = b["t"] - a["t"]
        ours = {name: b["groups"][name] - a["groups"][name] for name in a["groups"]}
        ours["postgres_backends"] = b["pg"] - a["pg"]
        ours["client"] = b["own"] - a["own"]
        busy_s = (b["busy"] - a["busy"]) / tick
        return {
            "wall_s": round(wall, 1),
            "machine_busy": round((b["busy"] - a["busy"]) / (b["total"] - a["total"]), 3),
            "cpu_s": {k: round(v, 2) for k, v in ours.items()},
            "other_cores": round((busy_s - sum(ours.values())) / wall, 2),
        }


async def progress(rec: Recorder, cfg: argparse.Namespace, meter: CpuMeter, every_s: float = 10.0) -> None:
    """Every 10 s: a line of progress, and where the machine's CPU went in that interval."""
    last = meter.snap()
    while True:
        await asyncio.sleep(every_s)
        now = meter.snap()
        interval = {
            "t_s": round(now["t"] - rec.t0, 1),
            **CpuMeter.diff(last, now),
            "code_in_flight": rec.code_sent - len(rec.verdict_s) - len(rec.never_final),
        }
        rec.intervals.append(interval)
        last = now
        errors = sum(n for (_, status), n in rec.statuses.items() if not status.startswith("2"))
        print(f"  {interval['t_s']:5.0f} s: {rec.done} requests, {errors} errors, {len(rec.verdict_s)}/"
              f"{cfg.code} code verdicts, machine {interval['machine_busy']:.0%} busy", flush=True)  # fmt: skip


async def run_mode(
    base: str,
    cfg: argparse.Namespace,
    c: Content,
    mode: str,
    groups: dict[str, list[Learner]],
    plans: dict[int, list[Task]],
    meter: CpuMeter,
) -> dict[str, Any]:
    """One traffic mode: idle, the burst (the learners' answers and the code submissions), idle again."""
    rec = Recorder()
    client = Client(base, rec)
    out: dict[str, Any] = {"recorder": rec, "cpu": {}}
    sampler = LockSampler(cfg.database_url)
    try:
        before = meter.snap()
        await idle_phase(client, groups[f"{mode}:idle"], plans, cfg.warmup, cfg.idle, "idle")
        out["cpu"]["idle"] = CpuMeter.diff(before, meter.snap())
        print(f"{mode}: idle done, {len(rec.latency['grade_idle'])} grading POSTs", flush=True)

        rng = random.Random(cfg.seed + MODES.index(mode))
        learners = groups[f"{mode}:burst"]
        coroutines = [
            burst_learner(client, learner, rng.uniform(0, cfg.window), cfg.seed * 1000 + i, plans[learner.user_id])
            for i, learner in enumerate(learners)
        ]
        numbers = [n for n in BUILD for _ in range(3 if n == "0.5" else 1)]  # most on one exercise: hot rows
        for _ in range(cfg.code):
            number = rng.choice(numbers)
            reference, wrongs = c.code[number]
            right = rng.random() < 0.65
            task = Task(WORKBOOK, number, {"code": reference if right else rng.choice(wrongs)}, right)
            coroutines.append(burst_code(client, rng.choice(learners), rng.uniform(0, cfg.window), task))

        dl0 = deadlocks(cfg.admin_url, cfg.db_name)
        before = meter.snap()
        rec.t0 = time.perf_counter()
        rec.first, rec.last, rec.done = float("inf"), 0.0, 0
        sampler.start()
        ticker = asyncio.create_task(progress(rec, cfg, meter))
        await asyncio.gather(*coroutines)
        ticker.cancel()
        burst_end = time.perf_counter()
        out["cpu"]["burst"] = CpuMeter.diff(before, meter.snap())
        out["burst"] = {
            "requests": rec.done,
            "seconds": rec.last - rec.first,
            "wall_s": burst_end - rec.t0,
            "deadlocks": deadlocks(cfg.admin_url, cfg.db_name) - dl0,
        }
        sampler.halt.set()
        # Idle again: the machine is shared, and a neighbour's load during the idle phase or the
        # burst would skew the ratio; the two idle figures bracket the burst.
        before = meter.snap()
        await idle_phase(client, groups[f"{mode}:idle_after"], plans, 0, cfg.idle, "idle_after")
        out["cpu"]["idle_after"] = CpuMeter.diff(before, meter.snap())
    finally:
        sampler.halt.set()
        await client.http.aclose()
    if sampler.is_alive():
        sampler.join(timeout=5)
    out["locks"] = sampler.report()
    return out


async def drive(
    base: str, cfg: argparse.Namespace, c: Content, groups: dict[str, list[Learner]], plans: dict[int, list[Task]]
) -> dict[str, Any]:
    out: dict[str, Any] = {"modes": {}}
    conn = psycopg.connect(cfg.database_url, autocommit=True)
    meter = CpuMeter(conn, cfg.pgid_names)
    try:
        for mode in cfg.modes:
            out["modes"][mode] = await run_mode(base, cfg, c, mode, groups, plans, meter)
        rec = out["saturation_recorder"] = Recorder()
        client = Client(base, rec)
        try:
            before = meter.snap()
            n, seconds = await saturate(client, groups["saturate"], c, cfg.saturate) if cfg.saturate else (0, 0.0)
            out["cpu_saturation"] = CpuMeter.diff(before, meter.snap())
        finally:
            await client.http.aclose()
        out["saturation"] = {"requests": n, "seconds": seconds}
    finally:
        conn.close()
    return out


# ---- checks -------------------------------------------------------------------------------------


def check(rec: Recorder, user_ids: set[int]) -> dict[str, Any]:
    """Every 2xx answer in the database exactly once, as graded as expected; every code attempt
    final; the boards and streak totals consistent with the progress rows."""
    from django.db import connection
    from django.db.models import F

    from apps.exercises.models import Attempt
    from apps.progress.models import ExerciseProgress, LearnerStats, Score, ScoreBucket

    rows = {
        a["id"]: a
        for a in Attempt.objects.filter(user_id__in=user_ids).values(
            "id", "user_id", "status", "verdict", "outcome", "feedback",
            number=F("exercise__number"), slug=F("exercise__workbook__slug"),
        )
    }  # fmt: skip
    missing = [i for i in rec.accepted if i not in rows]
    per_user_db = Counter(a["user_id"] for a in rows.values())
    per_user_ok = Counter(s.user_id for s in rec.accepted.values())
    # An attempt the client never heard back about may exist: allow exactly those, per learner.
    extra = sum(
        max(0, per_user_db[u] - per_user_ok[u] - rec.unconfirmed[u]) for u in per_user_db
    )  # fmt: skip
    wrong_user = [i for i, s in rec.accepted.items() if i in rows and rows[i]["user_id"] != s.user_id]
    wrong_exercise = [
        i for i, s in rec.accepted.items() if i in rows and f"{rows[i]['slug']}/{rows[i]['number']}" != s.key
    ]
    not_final = [i for i, a in rows.items() if a["status"] not in FINAL]
    not_graded = Counter(a["feedback"][:90] for a in rows.values() if a["status"] == "not_graded")
    unexpected = []
    for i, s in rec.accepted.items():
        a = rows.get(i)
        if a is None or a["status"] != "graded":
            continue
        ok = a["outcome"] == "passed" if s.code else a["verdict"] == "correct"
        if ok != s.right:
            unexpected.append({"id": i, "exercise": s.key, "sent_right": s.right, "verdict": a["verdict"]})

    score, bucket, progress, stats = (m._meta.db_table for m in (Score, ScoreBucket, ExerciseProgress, LearnerStats))
    with connection.cursor() as cursor:
        # Buckets (learners per score on a global board) against the visible score rows.
        cursor.execute(f"""
            SELECT count(*) FROM (
                SELECT board, points, count(*) AS n FROM {score}
                WHERE NOT hidden AND (board = 'all' OR board LIKE 'week:%%') GROUP BY board, points) s
            FULL JOIN (SELECT board, points, learners FROM {bucket} WHERE learners > 0) b USING (board, points)
            WHERE coalesce(s.n, 0) <> coalesce(b.learners, 0)""")  # noqa: S608 - our table names
        bucket_mismatches = int(cursor.fetchone()[0])
        # Each learner's all-time score and streak totals against their progress rows.
        cursor.execute(f"""
            SELECT count(*) FROM (SELECT user_id, sum(points) AS p, count(*) FILTER (WHERE solved_at IS NOT NULL) AS n
                                  FROM {progress} GROUP BY user_id) p
            LEFT JOIN {score} s ON s.user_id = p.user_id AND s.board = 'all'
            LEFT JOIN {stats} st ON st.user_id = p.user_id
            WHERE coalesce(s.points, 0) <> p.p OR coalesce(st.points, 0) <> p.p OR coalesce(st.solves, 0) <> p.n""")  # noqa: S608
        score_mismatches = int(cursor.fetchone()[0])
    return {
        "accepted": len(rec.accepted),
        "in_database": len(rows),
        "missing": len(missing),
        "extra_beyond_unconfirmed": extra,
        "unconfirmed_posts": sum(rec.unconfirmed.values()),
        "wrong_owner": len(wrong_user),
        "wrong_exercise": len(wrong_exercise),
        "not_final": len(not_final),
        "client_gave_up_polling": len(rec.never_final),
        "lost": len(missing) + len(not_final) + len(wrong_user) + len(wrong_exercise),
        "not_graded": dict(not_graded),
        "unexpected_verdicts": unexpected[:10],
        "unexpected_verdict_count": len(unexpected),
        "bucket_mismatches": bucket_mismatches,
        "score_or_streak_mismatches": score_mismatches,
    }


def code_latency_db(ids: list[int]) -> list[float]:
    """Server-side queue → verdict: created_at to finished_at of the code attempts."""
    from apps.exercises.models import Attempt

    return [
        (a.finished_at - a.created_at).total_seconds()
        for a in Attempt.objects.filter(pk__in=ids, finished_at__isnull=False).only("created_at", "finished_at")
        if a.finished_at is not None
    ]


# ---- report -------------------------------------------------------------------------------------


def stats_ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.5), 1),
        "p95_ms": round(percentile(values, 0.95), 1),
        "max_ms": round(max(values), 1),
    }


def ratio(a: dict[str, float], b: dict[str, float], key: str = "p95_ms") -> float | None:
    return round(a[key] / b[key], 2) if a["n"] and b["n"] and b[key] else None


def mode_report(cfg: argparse.Namespace, mode: str, out: dict[str, Any], checks: dict[str, Any]) -> dict[str, Any]:
    rec: Recorder = out["recorder"]
    cores = os.cpu_count() or 1
    lat = rec.latency
    idle, burst, idle_after = stats_ms(lat["grade_idle"]), stats_ms(lat["grade"]), stats_ms(lat["grade_idle_after"])
    get_idle, get_burst = stats_ms(lat["exercise_get_idle"]), stats_ms(lat["exercise_get"])
    get_after = stats_ms(lat["exercise_get_idle_after"])
    b = out["burst"]
    errors = {f"{kind} {status}": n for (kind, status), n in sorted(rec.statuses.items()) if not status.startswith("2")}
    result = {
        "numbers": {"fixed": "the seed's, the same for every learner", "own": "each learner's own"}[mode],
        "grading_post": {
            "idle": idle,
            "burst": burst,
            "ratio_p95": ratio(burst, idle),
            "idle_after_burst": idle_after,
            "ratio_p95_to_idle_after": ratio(burst, idle_after),
        },
        "exercise_get": {
            "idle": get_idle,
            "burst": get_burst,
            "ratio_p95": ratio(get_burst, get_idle),
            "idle_after_burst": get_after,
        },
        "code_submit_post": stats_ms(lat["code_submit"]),
        "code_enqueue_to_verdict_client": stats_ms([v * 1000 for v in rec.verdict_s]),
        "code_enqueue_to_verdict_db": stats_ms([v * 1000 for v in out["db_verdict"]]),
        "statuses": {f"{kind} {status}": n for (kind, status), n in sorted(rec.statuses.items())},
        "errors": errors,
        "error_count": sum(errors.values()),
        "checks": checks,
        "locks": {**out["locks"], "deadlocks": b["deadlocks"]},
        "throughput": {
            "burst_requests": b["requests"],
            "burst_seconds": round(b["seconds"], 1),
            "burst_requests_per_s": round(b["requests"] / b["seconds"], 1),
            "burst_requests_per_s_per_core": round(b["requests"] / b["seconds"] / cores, 1),
            "burst_grading_posts_per_s": round(len(lat["grade"]) / b["seconds"], 1),
        },
        # Per phase: machine busy, CPU seconds of our processes, and the cores used by everything
        # else (sandbox containers, Docker, and whoever else shares the machine).
        "cpu": out["cpu"],
        "timeline": timeline(rec),
    }
    if mode == "own":
        answered = {t.key for tasks in out["plans"] for t in tasks}
        result["exercises"] = {"varying_instant": len(out["varying"]), "answered_in_this_mode": len(answered)}
    return result


def report(
    cfg: argparse.Namespace, out: dict[str, Any], checks: dict[str, dict[str, Any]], profile: dict[str, Any] | None
) -> dict[str, Any]:
    from django.conf import settings

    cores = os.cpu_count() or 1
    sat = out["saturation"]
    srec: Recorder = out["saturation_recorder"]
    modes = {mode: mode_report(cfg, mode, out["modes"][mode], checks[mode]) for mode in cfg.modes}
    result: dict[str, Any] = {
        "command": " ".join(["bench/burst.py", *sys.argv[1:]]),
        "shape": {
            "gunicorn_workers": GUNICORN_WORKERS,
            "sandbox_concurrency": SANDBOX_CONCURRENCY,
            "cores": cores,
            "learners_per_mode": cfg.learners,
            "code_submissions_per_mode": cfg.code,
            "window_s": cfg.window,
            "settings": SETTINGS,
            "database": cfg.db_name,
            "exercises": out["exercises"],
            "db_session_options": settings.DATABASES["default"]["OPTIONS"]["options"],
            "profiled": profile is not None,
        },
        "modes": modes,
        "saturation": {
            "grading_post": stats_ms(srec.latency["grade_saturated"]),
            "checks": checks["saturation"],
            "errors": {f"{k} {v}": n for (k, v), n in srec.statuses.items() if not v.startswith("2")},
            "grading_posts_per_s": round(sat["requests"] / sat["seconds"], 1) if sat["seconds"] else None,
            "grading_posts_per_s_per_core": round(sat["requests"] / sat["seconds"] / cores, 1)
            if sat["seconds"]
            else None,
            "cpu": out.get("cpu_saturation"),
        },
        "lock_timeouts_in_logs": out["log_lock_errors"],
    }
    if profile is not None:
        result["profile"] = profile
    return result


def timeline(rec: Recorder) -> list[dict[str, Any]]:
    """The burst in 10 s intervals: grading POSTs started in each, and where the CPU went."""
    rows, previous = [], 0.0
    for interval in rec.intervals:
        ms = [v for at, v in rec.grade_times if previous < at <= interval["t_s"]]
        rows.append({**interval, "grade": stats_ms(ms)})
        previous = interval["t_s"]
    return rows


# ---- profile of the variant path -----------------------------------------------------------------

# (label, file suffix, function name): where a request's time goes on the variant path. Cumulative
# times nest (resolving is inside the learner's variant, rendering inside the serializer).
PROFILED = [
    ("the learner's variant: current_variant (POST)", "apps/learning/selectors.py", "current_variant"),
    ("the learner's variant: learner_variant (GET)", "apps/learning/selectors.py", "learner_variant"),
    ("the learner's variant: _page_variant (GET)", "apps/learning/selectors.py", "_page_variant"),
    ("  round and cohort: learner_numbers", "apps/progress/selectors/learner.py", "learner_numbers"),
    ("  round and cohort: learner_numbers_now", "apps/progress/selectors/learner.py", "learner_numbers_now"),
    ("  round: progress_get", "apps/progress/selectors/learner.py", "progress_get"),
    ("  cohort: numbers_seed", "apps/progress/selectors/learner.py", "numbers_seed"),
    ("  drawing the numbers: variants.variant", "apps/exercises/content/variants.py", "variant"),
    ("  referenced exercises finished: finished_rounds", "apps/progress/selectors/learner.py", "finished_rounds"),
    ("resolving (cache.resolved, hits and misses)", "apps/exercises/content/cache.py", "resolved"),
    ("  misses: resolve()", "apps/exercises/content/resolve.py", "resolve"),
    ("  misses: ExerciseSpec.model_validate", "pydantic/main.py", "model_validate"),
    ("rendering (cache.rendered, hits and misses)", "apps/exercises/content/cache.py", "rendered"),
    ("  misses: Markdown, math (render.render)", "apps/exercises/content/render.py", "render"),
    ("    sanitizing (nh3)", "apps/core/html.py", "sanitize"),
    ("    LaTeX to MathML", "apps/exercises/content/render.py", "_mathml"),
    ("grading (grade_payload)", "apps/exercises/services.py", "grade_payload"),
    ("the answer's row and progress (attempt_record)", "apps/progress/services/progress.py", "attempt_record"),
    ("the solution shown after a solve (presentation.solution)", "apps/exercises/presentation.py", "solution"),
    ("the page's selector (exercise_page, GET)", "apps/learning/selectors.py", "exercise_page"),
    ("the widget (presentation.widget, GET)", "apps/exercises/presentation.py", "widget"),
    ("LTI score bindings looked up after a solve", "apps/lti/selectors.py", "bindings_for_solve"),
    ("authentication (DRF)", "rest_framework/request.py", "_authenticate"),
    ("SQL round trips (Django's cursor.execute)", "django/db/backends/utils.py", "execute"),
]


def profile_summary(folder: Path) -> dict[str, Any]:
    """Per kind (the exercise GET, the grading POST), merged over the web processes: requests
    profiled, CPU time per request, and the cumulative CPU time per request of each step above."""
    import pstats

    found: dict[str, Any] = {}
    for kind in ("get", "post"):
        files = sorted(folder.glob(f"{kind}-*.prof"))
        if not files:
            continue
        requests = sum(int(f.stem.rsplit("-", 1)[1]) for f in files)
        stats = pstats.Stats(*(str(f) for f in files))
        kept = ROOT / "var" / "bench" / f"burst-profile-{kind}.prof"
        stats.dump_stats(kept)  # for a closer look: python -m pstats var/bench/burst-profile-post.prof
        table: dict[tuple[str, int, str], Any] = stats.stats  # type: ignore[attr-defined]
        total = sum(tt for (_, _, tt, _, _) in table.values())
        steps = {}
        for label, suffix, name in PROFILED:
            ct = sum(v[3] for (path, _, fn), v in table.items() if fn == name and path.endswith(suffix))
            calls = sum(v[1] for (path, _, fn), v in table.items() if fn == name and path.endswith(suffix))
            steps[label] = {"ms_per_request": round(ct / max(1, requests) * 1000, 2), "calls": calls}
        found[kind] = {
            "file": str(kept.relative_to(ROOT)),
            "requests": requests,
            "profiled_ms_per_request": round(total / max(1, requests) * 1000, 2),
            "steps": steps,
        }
    return found


def print_profile(profile: dict[str, Any]) -> None:
    for kind, p in profile.items():
        label = {"get": "exercise GET", "post": "grading POST"}[kind]
        print(f"\n| {label}: {p['requests']} requests profiled, {p['profiled_ms_per_request']} ms each "
              f"(CPU, under cProfile) | ms per request | calls |\n|---|---|---|")  # fmt: skip
        for step, v in p["steps"].items():
            if v["calls"]:
                print(f"| {step} | {v['ms_per_request']} | {v['calls']} |")


def print_table(r: dict[str, Any]) -> None:
    def line(label: str, value: str, target: str = "") -> None:
        print(f"| {label} | {value} | {target} |")

    def ms(s: dict[str, float]) -> str:
        return f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f} / {s['max_ms']:.1f} ms (n={s['n']})" if s["n"] else "none"

    for mode, m in r["modes"].items():
        g, gt, t, ch, lk = m["grading_post"], m["exercise_get"], m["throughput"], m["checks"], m["locks"]
        print(f"\n## {mode}: {m['numbers']} numbers")
        print("\n| t (s) | machine busy | other cores | grading POSTs p50 / p95 / max | code in flight | our CPU s |")
        print("|---|---|---|---|---|---|")
        for row in m["timeline"]:
            cpu = " ".join(f"{k} {v}" for k, v in row["cpu_s"].items())
            print(f"| {row['t_s']:.0f} | {row['machine_busy']:.0%} | {row['other_cores']} | {ms(row['grade'])} | "
                  f"{row['code_in_flight']} | {cpu} |")  # fmt: skip
        print("\n| phase | wall s | machine busy | other cores | our CPU s |\n|---|---|---|---|---|")
        for phase, row in m["cpu"].items():
            cpu = " ".join(f"{k} {v}" for k, v in row["cpu_s"].items())
            print(f"| {phase} | {row['wall_s']} | {row['machine_busy']:.0%} | {row['other_cores']} | {cpu} |")
        print("\n| measure | value | target |\n|---|---|---|")
        if "exercises" in m:
            line("varying exercises answered", f"{m['exercises']['answered_in_this_mode']} of "
                 f"{m['exercises']['varying_instant']}")  # fmt: skip
        line("grading POST idle p50 / p95 / max", ms(g["idle"]))
        line("grading POST burst p50 / p95 / max", ms(g["burst"]))
        target = f"<= {TARGET_RATIO_OWN:.0f}x" if mode == "own" else f"<= {TARGET_RATIO:.0f}x"
        line("burst p95 / idle p95", f"{g['ratio_p95']}x", target)
        line("grading POST idle again after the burst", ms(g["idle_after_burst"]))
        line("burst p95 / idle-after p95", f"{g['ratio_p95_to_idle_after']}x")
        line("exercise GET idle / burst", f"{ms(gt['idle'])}; {ms(gt['burst'])}")
        line("exercise GET burst p95 / idle p95", f"{gt['ratio_p95']}x")
        line("code enqueue -> verdict (client, 100 ms polls)", ms(m["code_enqueue_to_verdict_client"]))
        line("code created -> finished (database)", ms(m["code_enqueue_to_verdict_db"]))
        line("errors (non-2xx, transport)", f"{m['error_count']} {m['errors'] or ''}", "0")
        line("lost attempts", f"{ch['lost']} (accepted {ch['accepted']}, missing {ch['missing']}, not final "
             f"{ch['not_final']}, extra {ch['extra_beyond_unconfirmed']})", "0")  # fmt: skip
        line("not graded (final, platform fault)", str(sum(ch["not_graded"].values())), "0")
        line("unexpected verdicts", str(ch["unexpected_verdict_count"]), "0")
        line("board / streak mismatches", f"{ch['bucket_mismatches']} / {ch['score_or_streak_mismatches']}", "0")
        line("longest lock wait seen (200 ms samples)",
             f"{lk['max_wait_ms']} ms ({lk['wait_episodes_seen']} waits seen)", "< 1000 ms")  # fmt: skip
        line("deadlocks", str(lk["deadlocks"]), "0")
        line("burst throughput", f"{t['burst_requests_per_s']} req/s, {t['burst_requests_per_s_per_core']} per core, "
             f"{t['burst_grading_posts_per_s']} grading POSTs/s ({t['burst_requests']} in {t['burst_seconds']} s)")  # fmt: skip
    s = r["saturation"]
    print("\n| measure | value | target |\n|---|---|---|")
    line("lock timeouts in the process logs", str(r["lock_timeouts_in_logs"]), "0")
    if s["grading_posts_per_s"] is not None:
        line("saturated grading POSTs (8 clients, fixed numbers)", f"{s['grading_posts_per_s']}/s, "
             f"{s['grading_posts_per_s_per_core']} per core, {ms(s['grading_post'])}")  # fmt: skip
        line("saturation: errors, lost, unexpected verdicts", f"{sum(s['errors'].values())}, {s['checks']['lost']}, "
             f"{s['checks']['unexpected_verdict_count']}", "0, 0, 0")  # fmt: skip
    if "profile" in r:
        print_profile(r["profile"])


# ---- main ---------------------------------------------------------------------------------------


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # unwinds through the finally blocks: every process is stopped


def wait_until(ready: Any, what: str, procs: list[Proc], timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        for proc in procs:
            if proc.popen.poll() is not None:
                raise RuntimeError(f"{proc.name} exited:\n{proc.log.read_text(errors='replace')[-3000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} not ready after {timeout:.0f} s")
        time.sleep(0.2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="30 learners, 10 code submissions, a 20 s window")
    parser.add_argument("--modes", default=",".join(MODES), help="fixed, own or both (fixed,own): one burst each")
    parser.add_argument("--learners", type=int, default=300, help="learners in each mode's burst")
    parser.add_argument("--code", type=int, default=100, help="code submissions in each mode's burst")
    parser.add_argument("--window", type=float, default=120.0, help="seconds over which learners arrive")
    parser.add_argument("--idle", type=int, default=150, help="idle grading POSTs measured (after --warmup)")
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--saturate", type=float, default=15.0, help="seconds of closed-loop load (0: skip)")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the exercise GET and the grading POST in the web processes "
        "(slower: for where the time goes, not for the latencies)"
    )  # fmt: skip
    cfg = parser.parse_args()
    if cfg.quick:
        cfg.learners, cfg.code, cfg.window, cfg.saturate = 30, 10, 20.0, 5.0
    cfg.modes = [m.strip() for m in cfg.modes.split(",") if m.strip()]
    if not cfg.modes or any(m not in MODES for m in cfg.modes):
        parser.error(f"--modes: one or more of {', '.join(MODES)}")

    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        print("DATABASE_URL must point at PostgreSQL (scripts/services.sh starts one)", file=sys.stderr)
        return 2
    image = os.environ.get("SANDBOX_IMAGE") or (ROOT / "var/sandbox-image").read_text().strip()
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, even if started with SIGINT ignored
    logs = ROOT / "var" / "bench" / "burst-logs"
    logs.mkdir(parents=True, exist_ok=True)
    for old in logs.glob("*.log"):
        old.unlink()
    procs = Procs(logs)
    tmp = tempfile.TemporaryDirectory(prefix="burst-redis-")
    profile_dir = Path(tmp.name) / "profile"
    try:
        cfg.db_name, cfg.database_url, cfg.admin_url = private_database(os.environ["DATABASE_URL"])
        redis_port = free_port()
        redis = procs.spawn(
            "redis",
            ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "", "--appendonly", "no",
             "--dir", tmp.name],
            dict(os.environ),
        )  # fmt: skip
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": SETTINGS,
            "DATABASE_URL": cfg.database_url,
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/1",
            "SANDBOX_IMAGE": image,
        }
        os.environ.update(env)
        # Every workbook: the own-numbers mode answers the varying exercises of all of them.
        started = time.perf_counter()
        for args in (["migrate", "--noinput", "-v0"], ["sync_content", "-v0"]):
            subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)
        print(f"migrated and synced in {time.perf_counter() - started:.0f} s", flush=True)

        import django

        django.setup()
        from django.db import connection

        from apps.sandbox import selectors

        print("creating learners and tokens ...", flush=True)
        c = content()
        codes = cohort_codes()
        groups: dict[str, list[Learner]] = {}
        plans: dict[int, list[Task]] = {}
        n_idle = max(10, cfg.idle // 3)
        for mode in cfg.modes:
            for group, count in (("burst", cfg.learners), ("idle", n_idle), ("idle_after", n_idle)):
                learners = groups[f"{mode}:{group}"] = accounts(f"{mode}-{group}-", count, codes)
                if mode == "own":
                    plans.update(own_plans(learners, c, cfg.seed + len(group)))
                else:
                    for i, learner in enumerate(learners):
                        plans[learner.user_id] = plan(random.Random(f"{group}-{cfg.seed}-{i}"), c.pool, c)
        groups["saturate"] = accounts("saturate", SATURATION_CLIENTS)
        print(f"{len(plans)} learners' plans worked out; {len(c.varying)} varying exercises", flush=True)
        connection.close()

        worker = procs.spawn(
            "sandbox-worker",
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "sandbox", "-c", str(SANDBOX_CONCURRENCY),
             "-n", "bench-burst@%h", "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
            env,
        )  # fmt: skip
        web_env = dict(env)
        if cfg.profile:
            profile_dir.mkdir()
            web_env["BENCH_PROFILE_DIR"] = str(profile_dir)
        port = free_port()
        web = procs.spawn(
            "gunicorn",
            [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", str(GUNICORN_WORKERS), "--timeout", "60", "--log-level", "warning"],
            web_env,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"

        def web_up() -> bool:
            try:
                return httpx.get(f"{base}/api/v1/workbooks/", timeout=2).status_code in (200, 401, 403)
            except httpx.TransportError:
                return False

        print("waiting for gunicorn and the sandbox worker's self-test ...", flush=True)
        wait_until(web_up, "gunicorn", [web, redis])
        wait_until(selectors.available, "the sandbox worker", [worker, redis])
        cfg.pgid_names = [("gunicorn", web.popen.pid), ("sandbox_worker", worker.popen.pid)]

        print(f"modes {', '.join(cfg.modes)}, each: idle {cfg.idle} grading POSTs, a burst of {cfg.learners} learners "
              f"and {cfg.code} code submissions over {cfg.window:.0f} s, idle again; then saturation "
              f"{cfg.saturate:.0f} s ...", flush=True)  # fmt: skip
        out = asyncio.run(drive(base, cfg, c, groups, plans))
        out["exercises"] = {"fixed": c.pool, "own": [f"{s}/{n}" for s, n in c.varying], "code": BUILD}

        checks: dict[str, dict[str, Any]] = {}
        for mode in cfg.modes:
            m = out["modes"][mode]
            users = {learner.user_id for g in ("burst", "idle", "idle_after") for learner in groups[f"{mode}:{g}"]}
            checks[mode] = check(m["recorder"], users)
            m["db_verdict"] = code_latency_db([i for i, s in m["recorder"].accepted.items() if s.code])
            m["plans"] = [plans[u] for u in users]
            m["varying"] = c.varying
        checks["saturation"] = check(out["saturation_recorder"], {learner.user_id for learner in groups["saturate"]})
        connection.close()
    finally:
        procs.stop_all()  # the web processes write their last profiles as they exit
        profile = profile_summary(profile_dir) if cfg.profile and profile_dir.exists() else None
        tmp.cleanup()

    needles = ("lock timeout", "deadlock detected")
    out["log_lock_errors"] = sum(
        p.read_text(errors="replace").count(n) for p in logs.glob("*.log") if p.name != "redis.log" for n in needles
    )
    result = report(cfg, out, checks, profile)
    target = ROOT / "var" / "bench" / "burst.json"
    target.write_text(json.dumps(result, indent=2))
    print_table(result)
    print(f"\nwrote {target.relative_to(ROOT)}; process logs in {logs.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted: every process the benchmark started was stopped", file=sys.stderr)
        sys.exit(130)
