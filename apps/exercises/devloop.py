"""The authors' edit loop (``manage.py content_dev``, ``make content-dev``): watch the content
roots, and on a saved file re-sync and re-check only what it changed.

A chapter file (or a code folder one of its exercises names) is loaded alone
(``load_workbook(chapter_glob=...)``) and synced chapter by chapter here: ``workbook_sync`` with a
partial spec would retire every other chapter's exercises. A file the whole workbook depends on
(``workbook.yaml``, ``presets.yaml``, ``skills.yaml``), a removed chapter file or a workbook not
in the database yet is a full ``workbook_sync`` of the whole folder, which is then correct.

What could not be loaded, and what failed its checks, is kept per workbook and file in the cache
(Redis when configured; the serving process's memory on the embedded default, where
``content_dev --serve`` runs the watcher beside the server) until the file is fixed. In dev mode
(``settings.CONTENT_DEV``, which production never sets) the exercise and workbook pages show it
instead of the old content, and ``static/js/content-dev.js`` reloads an open page when
``status()``'s token moves: the content generation (every content write) and the errors' revision.
"""

from __future__ import annotations

import glob
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.core.cache import cache as django_cache
from django.db import close_old_connections, transaction

from apps.core.exceptions import ApplicationError
from apps.exercises import selectors, services
from apps.exercises.content import cache, source
from apps.exercises.content.checks import check_chapter, check_exercise
from apps.exercises.content.loader import Expected, LoadError, load_workbook, workbook_dirs
from apps.exercises.content.schema import ChapterSpec, WorkbookSpec
from apps.exercises.content.source import ChapterText
from apps.exercises.models import Workbook
from apps.sandbox import queued
from apps.sandbox.runner import Runner

logger = logging.getLogger(__name__)

STATE_KEY = "exercises:content-dev"
POLL_S = 0.2  # how often the roots are looked at
SETTLE_S = 0.05  # a changed file is read once two looks this far apart agree (an editor mid-save)
_CHAPTER_NUMBER = re.compile(r"^(\d+)-")


def dev_mode() -> bool:
    """The edit loop's page additions are on (``content_dev --serve`` sets it; production never does)."""
    return bool(getattr(settings, "CONTENT_DEV", False))


# ---- what pages read --------------------------------------------------------------------------


def _state() -> dict[str, Any]:
    state = django_cache.get(STATE_KEY)
    if not isinstance(state, dict):
        return {"revision": 0, "done": 0, "busy": False, "errors": {}}
    return state


def status() -> dict[str, Any]:
    """What ``content-dev.js`` polls: a token that moves on every content write and every change of
    the errors shown, whether a change is being synced or checked, and how many were finished."""
    state = _state()
    errors = state["errors"]
    return {
        "token": f"{cache.generation()}.{state['revision']}",
        "busy": bool(state["busy"]),
        "done": int(state["done"]),
        "errors": sum(len(files) for files in errors.values()),
    }


def errors_for(*, slug: str, chapter: int | None = None) -> list[dict[str, Any]]:
    """The broken files of a workbook, as ``{"file", "message"}``: with ``chapter``, only those of
    that chapter's file and those the whole workbook depends on."""
    files = _state()["errors"].get(slug) or {}
    return [
        {"file": name, "message": entry["message"]}
        for name, entry in sorted(files.items())
        if chapter is None or entry.get("chapter") is None or entry.get("chapter") == chapter
    ]


def _record(slug: str, name: str, *, chapter: int | None, message: str | None, failing: Iterable[str] = ()) -> None:
    """Set (or, ``message`` None, clear) a file's error; the revision moves when what shows changes."""
    state = _state()
    files = state["errors"].setdefault(slug, {})
    entry = {"chapter": chapter, "message": message, "failing": sorted(failing)} if message else None
    if files.get(name) == entry:
        return
    if entry is None:
        files.pop(name, None)
    else:
        files[name] = entry
    if not files:
        state["errors"].pop(slug, None)
    state["revision"] += 1
    django_cache.set(STATE_KEY, state, None)


def _failing(slug: str, name: str) -> set[str]:
    entry = (_state()["errors"].get(slug) or {}).get(name) or {}
    return set(entry.get("failing") or [])


def _progress(*, busy: bool, finished: bool = False) -> None:
    state = _state()
    state["busy"] = busy
    state["done"] += 1 if finished else 0
    django_cache.set(STATE_KEY, state, None)


# ---- the partial sync ---------------------------------------------------------------------------


@transaction.atomic
def chapters_sync(
    *, slug: str, chapters: Sequence[tuple[ChapterSpec, ChapterText]], keep: frozenset[str] = frozenset()
) -> services.SyncReport:
    """Sync these chapters of a workbook (loaded with a ``chapter_glob``) one by one as the admin's
    upload does (``services.chapter_sync``: an exercise that left its chapter is retired, one that
    moved number within it is set aside first, the file's text is kept); other chapters' exercises are
    not touched. The workbook must exist (a new one goes through ``workbook_sync``). Raises
    ``NumberTaken`` when a number is held in another chapter: nothing is written then."""
    workbook = Workbook.objects.select_for_update().get(slug=slug)
    report = services.SyncReport(workbook=slug)
    for chapter_spec, text in chapters:
        part = services.chapter_sync(workbook=workbook, spec=chapter_spec, source=text, keep=keep)
        report.unchanged += part.unchanged
        for name in ("created", "new_versions", "updated", "retired", "renumbered"):
            getattr(report, name).extend(getattr(part, name))
    return report


# ---- the watcher ---------------------------------------------------------------------------------

Snapshot = dict[Path, tuple[int, int]]


def _ignored(path: Path) -> bool:
    """Editors' and Python's droppings: swap files, backups, caches."""
    name = path.name
    return (
        name.startswith((".", "#"))
        or name.endswith(("~", ".swp", ".swx", ".tmp", ".pyc"))
        or "__pycache__" in path.parts
    )


def snapshot(roots: Sequence[Path]) -> Snapshot:
    """(mtime, size) of every file of every workbook folder under ``roots`` (os.walk and one stat
    per file: about 5 ms for the five workbooks of fixtures/, looked at five times a second)."""
    files: Snapshot = {}
    for root in roots:
        if not root.is_dir():
            continue
        for folder in workbook_dirs(root):
            for top, dirs, names in os.walk(folder):
                dirs[:] = [d for d in dirs if not _ignored(Path(d))]
                for name in names:
                    path = Path(top, name)
                    if _ignored(path):
                        continue
                    try:
                        st = os.stat(path)
                    except OSError:  # removed between the listing and the look
                        continue
                    files[path] = (st.st_mtime_ns, st.st_size)
    return files


@dataclass
class Change:
    """One processed change: what was synced and checked, in one line."""

    workbook: str
    files: list[str]
    report: services.SyncReport | None = None
    problems: dict[str, list[str]] = field(default_factory=dict)  # file -> problems (load or checks)
    checked: int = 0
    skipped: list[str] = field(default_factory=list)  # code exercises left for want of a sandbox
    sync_s: float = 0.0
    check_s: float = 0.0

    def line(self) -> str:
        head = f"{self.workbook}: {', '.join(self.files)}"
        if self.report is None:
            return f"{head}: not synced (does not load), shown on its pages: " + " | ".join(
                " ".join(p.split()) for ps in self.problems.values() for p in ps
            )
        r = self.report
        counts = (
            f"{len(r.updated)} updated, {len(r.new_versions)} new versions, {len(r.created)} created, "
            f"{len(r.retired)} retired, {r.unchanged} unchanged in {self.sync_s:.2f} s"
        )
        found = sum(len(ps) for ps in self.problems.values())
        checks = f"{self.checked} checked in {self.check_s:.2f} s: " + (
            "ok" if not found else f"{found} problem(s), shown on its pages"
        )
        skipped = f"; not synced (they need the sandbox): {', '.join(self.skipped)}" if self.skipped else ""
        return f"{head}: {counts}; {checks}{skipped}"


class Watcher:
    """Polls the content roots' mtimes; ``poll_once`` syncs and checks what changed since the last look."""

    def __init__(
        self,
        roots: Sequence[Path] | None = None,
        *,
        runner: Callable[[], Runner | None] | None = None,
    ) -> None:
        self.roots = list(roots if roots is not None else settings.CONTENT_DIRS)
        self.seen = snapshot(self.roots)
        self._runner_factory = runner
        self._runner: Runner | None = None

    def runner(self) -> Runner | None:
        """The sandbox for code (expected values, code checks), as sync_content finds it: looked up
        when first needed, and again while there is none."""
        if self._runner is None:
            if self._runner_factory is not None:
                self._runner = self._runner_factory()
            else:
                self._runner, _ = queued.command_runner("content_dev")
        return self._runner

    def poll_once(self) -> list[Change]:
        """One look: every change since the last, synced and checked (one ``Change`` per workbook)."""
        now = snapshot(self.roots)
        if now == self.seen:
            return []
        for _ in range(10):
            time.sleep(SETTLE_S)
            again = snapshot(self.roots)
            if again == now:
                break
            now = again
        changed = {p for p in now.keys() | self.seen.keys() if now.get(p) != self.seen.get(p)}
        self.seen = now
        by_folder: dict[Path, set[Path]] = {}
        for path in changed:
            folder = self._folder_of(path)
            if folder is not None:
                by_folder.setdefault(folder, set()).add(path)
        changes = []
        for folder, paths in sorted(by_folder.items()):
            _progress(busy=True)
            try:
                changes.append(self.apply(folder, paths))
            finally:
                _progress(busy=False, finished=True)
        return changes

    def _folder_of(self, path: Path) -> Path | None:
        for root in self.roots:
            try:
                rel = path.relative_to(root)
            except ValueError:
                continue
            return root / rel.parts[0] if len(rel.parts) > 1 else None
        return None

    def apply(self, folder: Path, paths: set[Path]) -> Change:
        """Sync and check what ``paths`` (files of ``folder``) changed."""
        slug = folder.name
        names = sorted(str(p.relative_to(folder)) for p in paths)
        stems = self._chapters_touched(folder, paths)
        whole = stems is None or not Workbook.objects.filter(slug=slug).exists()
        change = Change(workbook=slug, files=names)
        if whole:
            self._sync_whole(folder, change)
        else:
            assert stems is not None
            self._sync_chapters(folder, sorted(stems), change)
        return change

    def _chapters_touched(self, folder: Path, paths: set[Path]) -> set[str] | None:
        """The chapter files (stems) a change reaches, or None when it reaches the whole workbook."""
        stems: set[str] = set()
        for path in paths:
            rel = path.relative_to(folder).parts
            if rel[0] == "chapters" and len(rel) == 2 and path.suffix == ".yaml":
                if not path.exists():
                    return None  # a chapter removed: the full sync retires its exercises
                stems.add(path.stem)
            elif rel[0] == "code" and len(rel) > 2:
                users = self._code_users(folder, rel[1])
                if users is None:
                    return None
                stems |= users
            else:
                return None
        return stems

    def _code_users(self, folder: Path, code_dir: str) -> set[str] | None:
        """The chapter files with an exercise whose code is in ``code/<code_dir>/`` (read as plain YAML)."""
        users = set()
        for path in sorted((folder / "chapters").glob("*.yaml")):
            try:
                raw = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                return None  # cannot tell: a full sync reports the broken file
            for ex in (raw or {}).get("exercises") or [] if isinstance(raw, dict) else []:
                code = ex.get("code") if isinstance(ex, dict) else None
                if isinstance(code, dict) and str(code.get("dir")) == code_dir:
                    users.add(path.stem)
        return users

    def _expected(self, slug: str) -> Expected:
        return Expected(runner=self.runner(), known=selectors.code_synced(slug=slug), skip_unavailable=True)

    def _sync_whole(self, folder: Path, change: Change) -> None:
        slug = folder.name
        started = time.monotonic()
        expected = self._expected(slug)
        chapter_files = sorted((folder / "chapters").glob("*.yaml"))
        try:
            spec = load_workbook(folder, expected=expected)
            change.report = services.workbook_sync(
                spec=spec, keep=frozenset(expected.skipped), sources=source.workbook_texts(folder)
            )
        except (LoadError, ApplicationError) as exc:
            message = str(exc)
            change.problems["workbook"] = [message]
            _record(slug, "workbook", chapter=None, message=message)
            return
        finally:
            change.sync_s = time.monotonic() - started
        _record(slug, "workbook", chapter=None, message=None)
        change.skipped = sorted(expected.skipped.values())
        # Checks: every exercise the sync changed, and those that failed before, file by file.
        by_stem = {p.stem: p for p in chapter_files}
        files = {c.number: f"chapters/{by_stem[s].name}" for c, s in self._chapter_stems(spec, by_stem)}
        for name in set(self._all_errors(slug)) - set(files.values()) - {"workbook"}:
            _record(slug, name, chapter=None, message=None)  # a file that is gone, or now loads
        self._check(slug, spec.chapters, files, change)

    def _chapter_stems(self, spec: WorkbookSpec, by_stem: dict[str, Path]) -> list[tuple[ChapterSpec, str]]:
        """Each chapter with its file's stem, by the number its file name starts with (else its order)."""
        numbered = {int(m.group(1)): stem for stem in by_stem if (m := _CHAPTER_NUMBER.match(stem))}
        ordered = sorted(by_stem)
        out = []
        for i, chapter in enumerate(spec.chapters):
            stem = numbered.get(chapter.number) or (ordered[i] if i < len(ordered) else None)
            if stem is not None:
                out.append((chapter, stem))
        return out

    def _all_errors(self, slug: str) -> dict[str, Any]:
        return dict(_state()["errors"].get(slug) or {})

    def _sync_chapters(self, folder: Path, stems: list[str], change: Change) -> None:
        slug = folder.name
        started = time.monotonic()
        expected = self._expected(slug)
        loaded: list[tuple[ChapterSpec, str, ChapterText]] = []
        for stem in stems:
            name = f"chapters/{stem}.yaml"
            try:
                part = load_workbook(folder, expected=expected, chapter_glob=glob.escape(stem))
                text = source.read_chapter(folder / name)
            except LoadError as exc:
                match = _CHAPTER_NUMBER.match(stem)
                change.problems[name] = [str(exc)]
                _record(slug, name, chapter=int(match.group(1)) if match else None, message=str(exc))
                continue
            loaded += [(c, name, text) for c in part.chapters]  # one, or none for a file with no chapter
        if loaded:
            try:
                chapters = [(c, text) for c, _, text in loaded]
                change.report = chapters_sync(slug=slug, chapters=chapters, keep=frozenset(expected.skipped))
            except ApplicationError as exc:
                for chapter, name, _ in loaded:
                    change.problems[name] = [exc.message]
                    _record(slug, name, chapter=chapter.number, message=exc.message)
                loaded = []
        change.sync_s = time.monotonic() - started
        change.skipped = sorted(expected.skipped.values())
        if change.report is None and not change.problems:
            change.report = services.SyncReport(workbook=slug)
        self._check(slug, [c for c, _, _ in loaded], {c.number: name for c, name, _ in loaded}, change)

    def _check(self, slug: str, chapters: list[ChapterSpec], files: dict[int, str], change: Change) -> None:
        """Check the exercises the sync changed and those that failed before; record each file's outcome."""
        if change.report is None:
            return
        started = time.monotonic()
        touched = {*change.report.created, *change.report.new_versions, *change.report.updated}
        touched |= {n.split(" → ")[-1] for n in change.report.renumbered}
        for chapter in chapters:
            name = files.get(chapter.number)
            if name is None:
                continue
            before = _failing(slug, name)
            problems: list[str] = []
            failing: list[str] = []
            redo = [e for e in chapter.exercises if e.number in touched or e.id in before]
            for spec in redo:
                found = check_exercise(spec, runner=self.runner() if spec.code is not None else None)
                change.checked += 1
                if found:
                    failing.append(spec.id)
                    problems += [f"exercise {spec.number}: {p}" for p in found]
            if redo:
                problems += check_chapter(chapter)
            elif before or name in self._all_errors(slug):
                # Nothing changed that a check looks at, but the file loads again: its old error goes.
                problems = []
            else:
                continue
            if problems:
                change.problems[name] = problems
            _record(slug, name, chapter=chapter.number, message="\n".join(problems) or None, failing=failing)
        change.check_s = time.monotonic() - started

    def run(self, *, write: Callable[[str], None], stop: Callable[[], bool] = lambda: False) -> None:
        """Poll until ``stop()``, writing a line per change. An unexpected error is written and the
        loop goes on (the author fixes the file; the watcher must not die with it)."""
        while not stop():
            try:
                close_old_connections()  # as a request would: a connection the database dropped is replaced
                for change in self.poll_once():
                    write(change.line())
            except Exception as exc:  # a dev loop reports and keeps watching
                logger.exception("content_dev: a change could not be processed")
                write(f"content_dev: could not process a change: {exc!r}")
            time.sleep(POLL_S)
