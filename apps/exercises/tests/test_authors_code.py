"""Authors' code runs only in the sandbox: saved in the admin, synced, checked (issue 29).

An author is staff, not a superuser: their reference solution, starter, wrong solutions and
checker are untrusted input to the web process, as learners' code is. Each test hands the
platform a solution that writes files (under the test's directory and under /tmp) and reads the
web process's secret (its environment, a file beside it, /proc) and proves that nothing of it
reaches the host: the files are not there afterwards, and the secret is in nothing stored or
shown. Real Docker, the real sandbox image, the session's real sandbox worker; nothing mocked.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.models import Exercise, ExerciseVersion, Workbook

pytestmark = pytest.mark.django_db

SLUG = "authors-book"
# The versions inline's management form, which the admin's change and add forms carry.
VERSIONS = {
    "versions-TOTAL_FORMS": "0",
    "versions-INITIAL_FORMS": "0",
    "versions-MIN_NUM_FORMS": "0",
    "versions-MAX_NUM_FORMS": "1000",
}

# Correct (GPT-style parameter count) on every case but one: on the "keywords" case, whose expected
# value tests.py leaves to the reference solution, it returns what it saw instead. On every call it
# tries to leave files behind. The paths are filled in by the test.
HOSTILE = """import os
import pathlib
import socket

HOST_FILES = {host_files!r}
SECRET_FILE = {secret_file!r}


def param_count(d, n_layers, vocab_size):
    for path in HOST_FILES:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            pathlib.Path(path).write_text("an author's solution wrote this")
        except OSError:
            pass
    if vocab_size == 10 and {snoop!r}:
        seen = ["hostname=" + socket.gethostname(), repr(sorted(os.environ.items()))]
        for path in ("/proc/1/environ", "/proc/%d/environ" % os.getppid(), SECRET_FILE):
            try:
                with open(path, "rb") as handle:
                    seen.append(handle.read().decode("utf-8", "replace").replace(chr(0), " "))
            except OSError as exc:
                seen.append(path + ": " + type(exc).__name__)
        return " | ".join(seen)
    return 12 * n_layers * d * d + vocab_size * d
"""


@dataclass
class Host:
    """What the web process has that an author's code must not reach."""

    secret: str
    secret_file: Path
    files: list[Path]

    def solution(self, *, snoop: bool) -> str:
        return HOSTILE.format(host_files=[str(p) for p in self.files], secret_file=str(self.secret_file), snoop=snoop)

    def untouched(self) -> None:
        for path in self.files:
            assert not path.exists(), f"an author's code wrote {path} on the host"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[Host]:
    secret = f"web-secret-{secrets.token_hex(16)}"
    monkeypatch.setenv("DJANGO_SECRET_KEY", secret)
    settings.SECRET_KEY = secret
    secret_file = tmp_path / ".env"
    secret_file.write_text(f"DJANGO_SECRET_KEY={secret}\n")
    files = [tmp_path / "written" / "by-the-author.txt", Path(f"/tmp/mlsys-author-{secrets.token_hex(8)}")]  # noqa: S108 - the point
    yield Host(secret, secret_file, files)
    for path in files:
        path.unlink(missing_ok=True)


@pytest.fixture
def author_client(make_user: Callable[..., User], host: Host) -> Client:
    # After ``host``: the session is signed with the secret it sets.
    user = make_user("grace", role=Role.AUTHOR)
    assert user.is_staff and not user.is_superuser and user.has_perm("exercises.change_exercise")
    client = Client()
    client.force_login(user)
    return client


def code_exercise(solution: str, *, suffix: str) -> tuple[int, str]:
    """Transformer Math's 0.5 (its chapter, and its spec as synced: expected values all computed),
    as a new exercise whose reference solution is ``solution``, given inline as the admin allows."""
    original = Exercise.objects.select_related("current_version").get(workbook__slug="transformer-math", number="0.5")
    assert original.current_version is not None
    spec = json.loads(json.dumps(original.current_version.spec))
    spec.update(id=f"authors-param-count-{suffix}", number=f"0.{90 + len(suffix)}", title=f"Author's {suffix}")
    spec["code"].update(
        solution=solution, starter="def param_count(d, n_layers, vocab_size):\n    return 0\n", wrong=[]
    )
    spec["code"]["dir"] = f"authors-{suffix}"
    return original.chapter_id, yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)


def add(client: Client, chapter: int, text: str) -> tuple[int, str]:
    response = client.post("/admin/exercises/exercise/add/", {"chapter": chapter, "spec_text": text, **VERSIONS})
    if response.status_code == 302:
        assert response["Location"] == "/admin/exercises/exercise/", response["Location"]
    return response.status_code, response.content.decode()


def errors(page: str) -> str:
    return " / ".join(part.split("</ul>")[0] for part in page.split('class="errorlist')[1:])


def stored() -> str:
    """Everything the platform keeps about content, as text."""
    return json.dumps(list(ExerciseVersion.objects.values_list("spec", flat=True)))


@pytest.fixture(params=["queue", "in-process"])
def sandbox_way(request: pytest.FixtureRequest, settings: Any) -> str:
    """With a broker the admin's runs go over the sandbox queue to the sandbox worker; on the
    embedded default (no broker, ``make run``) to containers the web process starts itself."""
    if request.param == "queue":
        request.getfixturevalue("sandbox_worker")
    else:
        request.getfixturevalue("sandbox_image")
        settings.CELERY_TASK_ALWAYS_EAGER = True
    return str(request.param)


def test_an_authors_code_saved_in_the_admin_runs_in_the_sandbox_and_leaves_no_trace(
    sandbox_way: str, author_client: Client, host: Host
) -> None:
    chapter, text = code_exercise(host.solution(snoop=False), suffix="a")
    status, page = add(author_client, chapter, text)
    assert status == 302, errors(page)  # a sound exercise whose code only misbehaves on the side saves
    assert Exercise.objects.filter(key="authors-param-count-a").exists()
    host.untouched()

    chapter, text = code_exercise(host.solution(snoop=True), suffix="bb")
    status, page = add(author_client, chapter, text)
    assert status == 200
    # What the reference returned is shown to the author: it ran in a sandbox container (its fixed
    # hostname), where the web process's secret was nowhere to read.
    assert "the reference solution fails its tests" in page
    assert "hostname=sandbox" in page
    assert host.secret not in page
    assert not Exercise.objects.filter(key="authors-param-count-bb").exists()
    host.untouched()
    assert host.secret not in stored()


def test_without_a_sandbox_code_is_refused_and_other_exercises_save(
    no_sandbox: None, author_client: Client, host: Host, settings: Any
) -> None:
    settings.SANDBOX_IMAGE = f"mlsys-sandbox:missing-{secrets.token_hex(4)}"
    chapter, text = code_exercise(host.solution(snoop=False), suffix="c")
    status, page = add(author_client, chapter, text)
    assert status == 200
    assert "Code checks need the sandbox, which is unavailable: nothing was saved." in page
    assert not Exercise.objects.filter(key="authors-param-count-c").exists()
    host.untouched()
    # An exercise without code needs no sandbox.
    plain = Exercise.objects.select_related("current_version").get(workbook__slug="transformer-math", number="0.1")
    assert plain.current_version is not None
    spec = dict(plain.current_version.spec)
    spec["title"] = "Edited without a sandbox"
    response = author_client.post(
        f"/admin/exercises/exercise/{plain.pk}/change/",
        {
            "chapter": plain.chapter_id,
            "is_active": "on",
            "spec_text": yaml.safe_dump(spec, sort_keys=False, allow_unicode=True),
            **VERSIONS,
        },
    )
    assert response.status_code == 302
    assert Exercise.objects.get(pk=plain.pk).title == "Edited without a sandbox"


@pytest.fixture
def authors_book(tmp_path: Path, host: Host, settings: Any) -> Path:
    """A workbook in the content files: Transformer Math's chapter 0, whose 0.5 reference solution
    is hostile (its tests.py leaves the "keywords" expected value to it)."""
    root = tmp_path / "content"
    book = root / SLUG
    shutil.copytree(DEFAULT_ROOT / "transformer-math", book)
    for chapter in (book / "chapters").glob("*.yaml"):
        if not chapter.name.startswith("00-"):
            chapter.unlink()
    (book / "skills.yaml").unlink(missing_ok=True)
    meta = yaml.safe_load((book / "workbook.yaml").read_text())
    meta.update(slug=SLUG, title="An author's book")
    (book / "workbook.yaml").write_text(yaml.safe_dump(meta, sort_keys=False, allow_unicode=True))
    (book / "code" / "0.5-param-count" / "solution.py").write_text(host.solution(snoop=True))
    settings.CONTENT_DIR = root
    settings.CONTENT_DIRS = [root]
    return book


def test_sync_content_computes_expected_values_in_the_sandbox(authors_book: Path, host: Host) -> None:
    out = StringIO()
    call_command("sync_content", stdout=out)
    assert f"{SLUG}:" in out.getvalue()
    version = Exercise.objects.select_related("current_version").get(workbook__slug=SLUG, number="0.5").current_version
    assert version is not None
    cases = {c["id"]: c for c in version.spec["code"]["cases"]}
    # The value the reference returned became the expected one: what it saw was the sandbox's.
    assert str(cases["keywords"]["expected"]).startswith("hostname=sandbox")
    assert cases["tiny_vocab"]["expected"] == 12 * 2 * 128 * 128 + 2 * 128
    host.untouched()
    assert host.secret not in stored()
    assert host.secret not in out.getvalue()

    # Unchanged code keeps its computed values: the next sync runs nothing and changes nothing.
    again = StringIO()
    call_command("sync_content", stdout=again)
    assert "0 created, 0 new versions, 0 updated" in again.getvalue()


def test_sync_content_without_a_sandbox_names_what_it_left_and_syncs_the_rest(
    authors_book: Path, host: Host, no_sandbox: None, settings: Any
) -> None:
    settings.SANDBOX_IMAGE = f"mlsys-sandbox:missing-{secrets.token_hex(4)}"
    out, err = StringIO(), StringIO()
    call_command("sync_content", stdout=out, stderr=err)
    assert "not synced (they need the sandbox): 0.5 (implement-param-count), 0.6" in out.getvalue()
    assert "make sandbox-image" in err.getvalue() and "sync_content" in err.getvalue()
    numbers = set(Workbook.objects.get(slug=SLUG).exercises.values_list("number", flat=True))
    assert "0.1" in numbers and "0.5" not in numbers and "0.6" not in numbers
    host.untouched()


def test_check_content_runs_authors_code_in_the_sandbox(authors_book: Path, host: Host, sandbox_image: str) -> None:
    out = StringIO()
    # The hostile reference may well be unsound content (a problem is a CommandError): what
    # matters here is where it ran.
    with contextlib.suppress(CommandError):
        call_command("check_content", "--workbook", SLUG, "--no-cache", stdout=out)
    assert f"{SLUG}: " in out.getvalue()
    assert "code runs:" not in out.getvalue()  # --no-cache: every run in a container
    host.untouched()
    assert host.secret not in out.getvalue()
