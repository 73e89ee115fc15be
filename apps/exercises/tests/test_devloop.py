"""The authors' edit loop (apps/exercises/devloop.py, ``manage.py content_dev``): a saved chapter
file is re-synced and re-checked alone, a broken one shows its error on its pages in dev mode only,
and the status the pages poll exists in dev mode only. The watcher is driven one look at a time
(``poll_once``), on a workbook written to a temporary content root."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises import devloop, services
from apps.exercises.content.loader import load_workbook
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.models import Exercise

pytestmark = pytest.mark.django_db

SLUG = "devloop-book"


def numeric(key: str, number: str, *, a: int, prompt: str = "") -> dict[str, Any]:
    return {
        "id": key,
        "number": number,
        "title": f"Exercise {key}",
        "kind": "derive",
        "format": "numeric",
        "prompt": prompt or "A layer has {{a}} rows of {{b}} weights. How many parameters does it hold?",
        "explanation": "Rows times weights per row: {{a}} × {{b}} = {{answer}}.",
        "givens": {"a": a, "b": 7},
        "derived": {"answer": "a * b"},
        "hints": ["Multiply."],
        "answer": {"value": "answer", "unit": "params"},
    }


def chapter(number: int, exercises: list[dict[str, Any]]) -> dict[str, Any]:
    return {"number": number, "title": f"Chapter {number}", "exercises": exercises}


class Book:
    """A workbook folder in a temporary content root, written as an author would."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / SLUG
        (self.folder / "chapters").mkdir(parents=True)
        meta = {"slug": SLUG, "title": "Edit loop", "summary": "Written by a test.", "position": 95}
        (self.folder / "workbook.yaml").write_text(yaml.safe_dump(meta))
        self.write(1, chapter(1, [numeric("alpha", "1.1", a=2), numeric("beta", "1.2", a=3)]))
        self.write(2, chapter(2, [numeric("gamma", "2.1", a=5), numeric("delta", "2.2", a=11)]))

    def path(self, number: int) -> Path:
        return self.folder / "chapters" / f"0{number}-chapter.yaml"

    def write(self, number: int, data: dict[str, Any] | str) -> None:
        self.path(number).write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def book(tmp_path: Path) -> Book:
    written = Book(tmp_path)
    services.workbook_sync(spec=load_workbook(written.folder))
    return written


@pytest.fixture
def watcher(book: Book) -> devloop.Watcher:
    return devloop.Watcher([book.root])


def rows() -> dict[str, tuple[int, int, str, bool, str]]:
    """Each exercise's (version pk, version number, content hash, active, prompt) by id."""
    found = Exercise.objects.filter(workbook__slug=SLUG).select_related("current_version")
    return {
        e.key: (e.current_version.pk, e.current_version.version, e.current_version.content_hash, e.is_active,
                e.current_version.spec["prompt"])
        for e in found if e.current_version is not None
    }  # fmt: skip


def test_the_watcher_notices_a_saved_chapter_and_syncs_only_that_chapter(book: Book, watcher: devloop.Watcher) -> None:
    assert watcher.poll_once() == []  # nothing saved since the first look
    before = rows()
    # Chapter 1: a prompt edited (1.1), an answer changed (1.2, a new version), an exercise added;
    # chapter 2's file is not touched.
    book.write(
        1,
        chapter(
            1,
            [
                numeric("alpha", "1.1", a=2, prompt="Edited: {{a}} rows of {{b}} weights. How many parameters?"),
                numeric("beta", "1.2", a=4),
                numeric("epsilon", "1.3", a=6),
            ],
        ),
    )
    [change] = watcher.poll_once()
    after = rows()
    assert change.workbook == SLUG and change.files == ["chapters/01-chapter.yaml"]
    assert change.report is not None
    assert (change.report.updated, change.report.new_versions, change.report.created) == (["1.1"], ["1.2"], ["1.3"])
    assert change.report.retired == [] and change.problems == {}
    assert change.checked == 3  # the three exercises the sync changed, nothing else
    assert after["alpha"][0] == before["alpha"][0] and after["alpha"][4].startswith("Edited:")
    assert after["beta"][1] == before["beta"][1] + 1
    assert after["gamma"] == before["gamma"] and after["delta"] == before["delta"]  # untouched
    assert "1 updated, 1 new versions, 1 created, 0 retired" in change.line()

    # An exercise left out of chapter 1's file is retired; chapter 2's, absent from this load, are not.
    book.write(1, chapter(1, [numeric("alpha", "1.1", a=2), numeric("epsilon", "1.2", a=6)]))
    [change] = watcher.poll_once()
    assert change.report is not None and change.report.retired == ["1.2"]
    assert change.report.renumbered == ["1.3 → 1.2"]
    final = rows()
    assert final["beta"][3] is False and final["epsilon"][3] is True
    assert final["gamma"] == before["gamma"] and final["delta"] == before["delta"]
    assert Exercise.objects.get(workbook__slug=SLUG, key="epsilon").number == "1.2"


def test_a_code_folder_change_reaches_the_chapters_that_use_it_and_a_workbook_file_the_whole_book(
    book: Book, watcher: devloop.Watcher
) -> None:
    (book.folder / "code" / "unused").mkdir(parents=True)
    (book.folder / "code" / "unused" / "solution.py").write_text("def f():\n    return 1\n")
    assert watcher._chapters_touched(book.folder, {book.folder / "code" / "unused" / "solution.py"}) == set()
    assert watcher._chapters_touched(book.folder, {book.path(2)}) == {"02-chapter"}
    assert watcher._chapters_touched(book.folder, {book.folder / "workbook.yaml"}) is None
    # A renamed workbook title reaches the workbook row through a full sync, every exercise kept.
    meta = {"slug": SLUG, "title": "Edit loop, renamed", "summary": "Written by a test.", "position": 95}
    (book.folder / "workbook.yaml").write_text(yaml.safe_dump(meta))
    before = rows()
    [change] = watcher.poll_once()
    assert change.report is not None and change.report.unchanged == 4 and change.report.retired == []
    assert rows() == before
    assert Exercise.objects.filter(workbook__title="Edit loop, renamed").count() == 4


@pytest.fixture
def author(make_user: Callable[..., User]) -> Client:
    user = make_user("an-author", role=Role.AUTHOR)
    assert user.is_staff
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def learner(make_user: Callable[..., User]) -> Client:
    client = Client()
    client.force_login(make_user("a-learner"))
    return client


def page(client: Client, number: str = "") -> str:
    url = f"/w/{SLUG}/{number}/" if number else f"/w/{SLUG}/"
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_a_broken_file_shows_its_error_on_its_pages_in_dev_mode_only(
    book: Book, watcher: devloop.Watcher, author: Client, learner: Client, settings: Any
) -> None:
    book.write(1, "number: 1\ntitle: Chapter 1\nexercises:\n  - id: alpha\n   number: [broken\n")
    [change] = watcher.poll_once()
    assert change.report is None and list(change.problems) == ["chapters/01-chapter.yaml"]
    assert "not synced (does not load)" in change.line()

    settings.CONTENT_DEV = False  # as every deployment runs: the old content, no error, no reload script
    html = page(author, "1.1")
    assert "rows of" in html and "does not load" not in html and "content-dev.js" not in html

    settings.CONTENT_DEV = True
    html = page(author, "1.1")
    assert "does not load" in html and "01-chapter.yaml" in html and "expected &lt;block end&gt;" in html
    assert "rows of" not in html and "content-dev.js" in html
    assert "expected &lt;block end&gt;" in page(author)  # the workbook page too
    shown = page(learner, "1.1")  # a learner is told the page is being edited, not the file's text
    assert "being edited" in shown and "block end" not in shown and "01-chapter.yaml" not in shown
    other = page(author, "2.1")  # another chapter's exercise is as it was, with the reload script
    assert "rows of" in other and "does not load" not in other and "content-dev.js" in other

    # Fixed, but failing a check (a given the prompt never shows): synced, and the problem shown instead.
    broken = numeric("alpha", "1.1", a=2, prompt="Fixed: {{a}} rows of weights. How many parameters?")
    book.write(1, chapter(1, [broken, numeric("beta", "1.2", a=3)]))
    [change] = watcher.poll_once()
    assert change.report is not None and change.report.updated == ["1.1"]
    assert change.problems["chapters/01-chapter.yaml"] == [
        "exercise 1.1: given 'b' never appears in the prompt (show it, or list it under implicit)"
    ]
    assert "never appears in the prompt" in page(author, "1.1") and "never appears" in page(author, "1.2")

    # Fixed: the error goes, and the page shows the new content.
    book.write(1, chapter(1, [numeric("alpha", "1.1", a=2, prompt="Fixed: {{a}} rows of {{b}} weights. How many?"),
                              numeric("beta", "1.2", a=3)]))  # fmt: skip
    [change] = watcher.poll_once()
    assert change.problems == {} and devloop.errors_for(slug=SLUG) == []
    html = page(author, "1.1")
    assert "Fixed:" in html and "does not load" not in html


def test_the_status_the_pages_poll_is_dev_only_and_moves_with_each_change(
    book: Book, watcher: devloop.Watcher, author: Client, settings: Any
) -> None:
    settings.CONTENT_DEV = False
    response = author.get("/dev/content-status/")
    assert response.status_code == 404

    settings.CONTENT_DEV = True
    first = json.loads(author.get("/dev/content-status/").content)
    assert set(first) == {"token", "busy", "done", "errors"} and first["errors"] == 0
    book.write(2, chapter(2, [numeric("gamma", "2.1", a=5, prompt="Now {{a}} rows of {{b}} weights. How many?"),
                              numeric("delta", "2.2", a=11)]))  # fmt: skip
    watcher.poll_once()
    second = json.loads(author.get("/dev/content-status/").content)
    assert second["token"] != first["token"] and second["done"] == first["done"] + 1
    assert second["busy"] is False
    assert f'data-token="{second["token"]}"' in page(author, "2.1")  # the page reloads from this token on


def test_content_synced_but_not_yet_checked_that_cannot_render_shows_its_error_in_dev_mode(
    book: Book, author: Client, settings: Any
) -> None:
    """Between a sync and its checks the page may be asked for: in dev mode content that raises
    while the page is built is shown as an error page (which reloads), not as a server error."""
    spec = load_workbook(book.folder)
    bad = spec.chapters[0].exercises[0].model_copy(update={"prompt": "{{ nope( rows of {{b}} weights?"})
    services.exercise_upsert(
        workbook=Exercise.objects.get(workbook__slug=SLUG, key="alpha").workbook,
        chapter=Exercise.objects.get(workbook__slug=SLUG, key="alpha").chapter,
        spec=bad,
        position=0,
    )
    settings.CONTENT_DEV = True
    html = page(author, "1.1")
    assert "does not load" in html and "this page, as synced" in html and "cannot parse" in html
    assert "content-dev.js" in html


def test_a_saved_solution_re_syncs_its_chapter_and_runs_its_checks_in_the_sandbox(
    tmp_path: Path, sandbox_image: str
) -> None:
    """A code folder's file reaches the chapter whose exercise names it; its checks run the code in
    the sandbox (the reference against its tests), as sync_content and check_content do."""
    shutil.copytree(DEFAULT_ROOT / "lm-from-scratch", tmp_path / "lm-from-scratch")  # synced for the session
    folder = tmp_path / "lm-from-scratch" / "code" / "0.6-count-pairs"
    watcher = devloop.Watcher([tmp_path])
    before = {e.key: e.current_version_id for e in Exercise.objects.filter(workbook__slug="lm-from-scratch")}
    (folder / "solution.py").write_text((folder / "wrong" / "misses_the_last_pair.py").read_text())
    [change] = watcher.poll_once()
    assert change.files == ["code/0.6-count-pairs/solution.py"]
    assert change.report is not None and change.report.updated + change.report.new_versions == ["0.6"]
    assert change.checked == 1
    [problem] = [p for p in change.problems["chapters/00-tokenization.yaml"] if "reference solution" in p]
    assert problem.startswith("exercise 0.6: the reference solution fails its tests")
    after = {e.key: e.current_version_id for e in Exercise.objects.filter(workbook__slug="lm-from-scratch")}
    changed = {key for key in before if before[key] != after[key]}
    assert changed <= {Exercise.objects.get(workbook__slug="lm-from-scratch", number="0.6", is_active=True).key}
