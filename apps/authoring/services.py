"""Writes on drafts: create, edit, check (the task's body), publish.

A draft is checked by the same checks as the exercise admin's save (``check_exercise``), with
authors' code run only in the sandbox (``queued.content_runner``), but off the request: the
admin asks for a check (``draft_check_request``), a Celery task runs ``draft_check_run`` and
writes its progress into the draft's report, and the preview page polls it. Publishing goes
through the exercise admin's own service (``exercise_save``): an answer change is a new version,
a prose change updates the current one.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache as django_cache
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import User
from apps.authoring.exceptions import DraftInvalid, DraftNotPublishable, DraftPublished
from apps.authoring.models import Draft, DraftStatus
from apps.exercises import selectors as exercise_selectors
from apps.exercises import services as exercise_services
from apps.exercises.content import loader
from apps.exercises.content.checks import check_exercise
from apps.exercises.content.resolve import ContentError
from apps.exercises.content.schema import ExerciseSpec
from apps.exercises.models import Chapter, Exercise, ExerciseVersion
from apps.sandbox import queued
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.runner import Job, Limits, Progress, Runner, RunResult, SandboxUnavailable

logger = logging.getLogger(__name__)

CODE_CHECKS_NEED_THE_SANDBOX = (
    "Code checks need the sandbox, which is unavailable: the reference solution, starter and wrong "
    "solutions run only in the sandbox (Docker and the sandbox image, or a ready sandbox worker)."
)
# How long the live run list of a check stays in the cache (longer than any check runs).
RUNS_TTL_S = 3600
STEPS = ("schema", "checks")
STEP_TITLES = {
    "schema": "YAML, schema, id and number",
    "checks": "Content checks (formulas, units, rendering, variants, answers; code in the sandbox)",
}


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---- reading a draft's YAML -------------------------------------------------------------------


@dataclass(frozen=True)
class Parsed:
    """A draft's text read as an exercise: the block as it would be stored, and the spec."""

    block: str
    spec: ExerciseSpec


def spec_parse(*, text: str, chapter: Chapter, exercise: Exercise | None) -> Parsed:
    """The draft's text read as the exercise admin's form reads an edit: as its block of the
    chapter file, by the loader's rules (the chapter's scenarios and presets apply; an existing
    exercise's code files are kept from its current version), with the id and number free.
    Raises DraftInvalid."""
    try:
        edit = exercise_selectors.exercise_edit_read(chapter=chapter, exercise=exercise, text=text)
    except loader.LoadError as exc:
        raise DraftInvalid(str(exc).splitlines()) from None
    return Parsed(block=edit.block, spec=edit.spec)


# ---- create, edit ---------------------------------------------------------------------------------


@transaction.atomic
def draft_create(*, chapter: Chapter, spec_text: str, user: User, exercise: Exercise | None = None) -> Draft:
    """A new draft: of a new exercise in ``chapter``, or of an edit of ``exercise`` (its chapter)."""
    if exercise is not None:
        chapter = exercise.chapter
    return Draft.objects.create(
        chapter=chapter,
        exercise=exercise,
        base_version=exercise.current_version if exercise is not None else None,
        spec_text=spec_text,
        created_by=user,
        updated_by=user,
    )


@transaction.atomic
def draft_update(*, draft: Draft, spec_text: str, user: User, chapter: Chapter | None = None) -> Draft:
    """Save new text. A report about other text is stale: the draft is back to unchecked."""
    locked = Draft.objects.select_for_update().get(pk=draft.pk)
    if locked.status == DraftStatus.PUBLISHED:
        raise DraftPublished
    fields = ["spec_text", "updated_by", "updated_at"]
    if chapter is not None and locked.exercise_id is None and chapter.pk != locked.chapter_id:
        locked.chapter = chapter
        fields.append("chapter")
    if spec_text != locked.spec_text or "chapter" in fields:
        locked.status, locked.report, locked.checked_hash, locked.check_started_at = DraftStatus.DRAFT, {}, "", None
        fields += ["status", "report", "checked_hash", "check_started_at"]
    locked.spec_text = spec_text
    locked.updated_by = user
    locked.save(update_fields=fields)
    return locked


# ---- checking ---------------------------------------------------------------------------------------


def _steps(**states: str) -> list[dict[str, Any]]:
    return [{"key": k, "title": STEP_TITLES[k], "state": states.get(k, "pending"), "problems": []} for k in STEPS]


@transaction.atomic
def draft_check_request(*, draft: Draft) -> Draft:
    """Mark the draft's current text for checking (the caller enqueues the task after commit).
    Asking again restarts a check that a lost worker left half done."""
    locked = Draft.objects.select_for_update().get(pk=draft.pk)
    if locked.status == DraftStatus.PUBLISHED:
        raise DraftPublished
    locked.status = DraftStatus.CHECKING
    locked.checked_hash = text_hash(locked.spec_text)
    locked.check_started_at = None
    locked.report = {"state": "queued", "requested_at": timezone.now().isoformat(), "steps": _steps(), "runs": []}
    locked.save(update_fields=["status", "checked_hash", "check_started_at", "report", "updated_at"])
    return locked


def runs_key(draft_id: int, checked: str) -> str:
    return f"authoring:draft:{draft_id}:{checked[:16]}:runs"


@dataclass
class RunLog:
    """The sandbox runs of one check, as they finish: kept for the report and put in the cache
    (the runs finish on the check's own threads, which do not write the database)."""

    key: str
    where: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.runs.append({"n": len(self.runs) + 1, **entry})
            snapshot = list(self.runs)
        django_cache.set(self.key, snapshot, timeout=RUNS_TTL_S)


@dataclass
class ReportingRunner:
    """The sandbox runner the checks use, with each run noted in the check's ``RunLog``: what ran,
    how it ended and the container it ran in."""

    inner: Runner
    log: RunLog

    def run(self, job: Job, limits: Limits, progress: Progress | None = None) -> RunResult:
        started = time.monotonic()
        try:
            result = self.inner.run(job, limits, progress)
        except SandboxUnavailable as exc:
            self.log.add({"entry": job.entry, "status": "sandbox unavailable", "fault": str(exc)[:300]})
            raise
        self.log.add(
            {
                "entry": job.entry,
                "status": str(result.status),
                "container": result.container_id[:12],
                "where": self.log.where,
                "seconds": round(time.monotonic() - started, 2),
            }
        )
        return result


def _progress(draft_id: int, checked: str, report: dict[str, Any]) -> bool:
    """Write the report while this very check is still the draft's; False if it is not any more."""
    return bool(
        Draft.objects.filter(pk=draft_id, status=DraftStatus.CHECKING, checked_hash=checked).update(report=report)
    )


def draft_check_run(*, draft_id: int) -> str:
    """The check task's body: claim the requested check (compare-and-set: a second delivery finds
    it claimed), run the checks on the text it was asked for, write progress and the report.
    Code runs only in the sandbox. Returns what happened (for the task's log)."""
    now = timezone.now()
    claimed = Draft.objects.filter(pk=draft_id, status=DraftStatus.CHECKING, check_started_at__isnull=True).update(
        check_started_at=now
    )
    if not claimed:
        return "not requested"  # gone, already claimed, edited since, or published
    draft = Draft.objects.select_related("chapter", "exercise__current_version").get(pk=draft_id)
    checked = draft.checked_hash
    if text_hash(draft.spec_text) != checked:
        return "stale"
    report: dict[str, Any] = {
        **draft.report,
        "state": "running",
        "started_at": now.isoformat(),
        "steps": _steps(schema="running"),
        "runs": [],
    }
    if not _progress(draft_id, checked, report):
        return "superseded"
    problems: list[str] = []
    spec: ExerciseSpec | None = None
    try:
        spec = spec_parse(text=draft.spec_text, chapter=draft.chapter, exercise=draft.exercise).spec
    except DraftInvalid as exc:
        problems = exc.problems
    report["steps"][0].update(state="failed" if problems else "passed", problems=problems)
    log: RunLog | None = None
    if spec is not None:
        report["steps"][1]["state"] = "running"
        runner: Runner | None = None
        if spec.code is not None:
            if sandbox_selectors.available():
                inner = queued.content_runner()
                where = (
                    "a sandbox worker, over the sandbox queue"
                    if isinstance(inner, queued.QueuedRunner)
                    else "a sandbox container this process started (embedded default)"
                )
                log = RunLog(key=runs_key(draft_id, checked), where=where)
                runner = ReportingRunner(inner, log)
                report["code_runs_in"] = where
            else:
                report["steps"][1].update(state="failed", problems=[CODE_CHECKS_NEED_THE_SANDBOX])
        if report["steps"][1]["state"] == "running":
            if not _progress(draft_id, checked, report):
                return "superseded"
            try:
                found = check_exercise(spec, runner=runner)
            except ContentError as exc:
                found = [str(exc)]
            report["steps"][1].update(state="failed" if found else "passed", problems=found)
        problems += report["steps"][1]["problems"]
    report.update(
        state="done",
        passed=not problems,
        problems=problems,
        runs=list(log.runs) if log is not None else [],
        finished_at=timezone.now().isoformat(),
    )
    written = Draft.objects.filter(pk=draft_id, status=DraftStatus.CHECKING, checked_hash=checked).update(
        status=DraftStatus.CHECKED, report=report
    )
    logger.info("draft checked", extra={"draft_id": draft_id, "passed": not problems, "written": bool(written)})
    return ("passed" if not problems else "failed") if written else "superseded"


def draft_check_abandon(*, draft_id: int, reason: str) -> bool:
    """End a check that cannot finish (its time limit, an unexpected error) as failed, so that the
    draft does not show "checking" for ever. Only a claimed check of the same draft; True if so."""
    draft = Draft.objects.filter(pk=draft_id, status=DraftStatus.CHECKING).first()
    if draft is None or draft.check_started_at is None:
        return False
    problems = [f"The checks did not finish: {reason}. Run them again."]
    report = {**draft.report, "state": "done", "passed": False, "problems": problems}
    report["finished_at"] = timezone.now().isoformat()
    return bool(
        Draft.objects.filter(pk=draft_id, status=DraftStatus.CHECKING, checked_hash=draft.checked_hash).update(
            status=DraftStatus.CHECKED, report=report
        )
    )


def live_runs(draft: Draft) -> list[dict[str, Any]]:
    """The sandbox runs a running check has finished so far (the report has them once it is done)."""
    if draft.status != DraftStatus.CHECKING or not draft.checked_hash:
        return list(draft.report.get("runs", []))
    return list(django_cache.get(runs_key(draft.pk, draft.checked_hash)) or [])


# ---- publishing ---------------------------------------------------------------------------------


def publish_refusal(draft: Draft) -> str:
    """Why this draft cannot be published now ("" if it can)."""
    if draft.status == DraftStatus.PUBLISHED:
        return "This draft is published already."
    if draft.status == DraftStatus.CHECKING:
        return "The checks are still running."
    if draft.status != DraftStatus.CHECKED or draft.checked_hash != text_hash(draft.spec_text):
        return "The checks have not run on this text (it was edited since): run them first."
    if not draft.report.get("passed"):
        return "The checks failed: fix what the report says and run them again."
    if draft.exercise is not None and draft.exercise.current_version_id != draft.base_version_id:
        return "The exercise changed since this draft was begun: start a new draft from its current text."
    return ""


@transaction.atomic
def draft_publish(*, draft: Draft, user: User) -> ExerciseVersion:
    """Apply a checked draft through the exercise admin's service. Raises DraftNotPublishable."""
    locked = Draft.objects.select_for_update(of=("self",)).select_related("chapter", "exercise").get(pk=draft.pk)
    why = publish_refusal(locked)
    if why:
        raise DraftNotPublishable(why)
    try:
        parsed = spec_parse(text=locked.spec_text, chapter=locked.chapter, exercise=locked.exercise)
    except DraftInvalid as exc:  # the workbook changed under it (a number taken since)
        raise DraftNotPublishable(exc.message) from None
    exercise = locked.exercise
    position = exercise.position if exercise is not None else locked.chapter.exercises.count()
    is_active = exercise.is_active if exercise is not None else None
    saved, outcome = exercise_services.exercise_save(
        chapter=locked.chapter, spec=parsed.spec, position=position, is_active=is_active, source=parsed.block
    )
    assert saved.current_version_id is not None
    version = ExerciseVersion.objects.get(pk=saved.current_version_id)
    locked.status = DraftStatus.PUBLISHED
    locked.published_at = timezone.now()
    locked.published_version = version
    locked.exercise = saved
    locked.updated_by = user
    locked.report = {**locked.report, "published": {"outcome": outcome, "version": version.version}}
    locked.save(
        update_fields=["status", "published_at", "published_version", "exercise", "updated_by", "updated_at", "report"]
    )
    logger.info(
        "draft published",
        extra={"draft_id": locked.pk, "exercise_id": saved.pk, "user_id": user.pk, "outcome": outcome},
    )
    return version
