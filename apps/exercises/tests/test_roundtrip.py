"""A lossless authoring round trip (issue 33, part 1): what is downloaded from the admin is the
content file as written, byte for byte, and an edit there changes only the edited lines; a chapter
file uploaded in the admin is stored as ``sync_content`` stores it, and a broken one changes nothing."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client

from apps.accounts.models import Role, User
from apps.exercises import selectors, services
from apps.exercises.content import loader, source
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.models import Chapter, ChapterSource, Exercise, ExerciseSource, ExerciseVersion, Workbook
from apps.exercises.tests import content
from apps.exercises.tests.admin_forms import post_exercise_edit

pytestmark = pytest.mark.django_db

SLUG, CHAPTER_FILE = "transformer-math", "00-parameter-counting.yaml"
PROMPT_LINE = "      Count every parameter (there are no biases). Answer in billions, to three significant figures.\n"
EDITED_LINE = "      Count every parameter (there are no biases). Answer in billions, to three significant figures, as a plain number.\n"


@pytest.fixture
def author_client(make_user: Callable[..., User]) -> Client:
    client = Client()
    client.force_login(make_user("ada", role=Role.AUTHOR))
    return client


def sync(folder: Path) -> services.SyncReport:
    """What ``sync_content`` does for one workbook folder: the loader, then the service, with the
    files' texts. Expected test values are those the session's sync computed (no sandbox run)."""
    expected = loader.Expected(known=selectors.code_synced(slug=folder.name))
    spec = loader.load_workbook(folder, expected=expected)
    return services.workbook_sync(spec=spec, sources=source.workbook_texts(folder))


def chapter_file(slug: str, name: str) -> bytes:
    return (DEFAULT_ROOT / slug / "chapters" / name).read_bytes()


def snapshot(slug: str) -> dict[str, Any]:
    """Everything stored for a workbook's exercises and chapters, as comparable data."""
    exercises = Exercise.objects.filter(workbook__slug=slug).select_related("current_version", "chapter")
    texts = dict(ExerciseSource.objects.filter(exercise__workbook__slug=slug).values_list("exercise__key", "text"))
    return {
        "exercises": {
            e.key: {
                "number": e.number,
                "chapter": e.chapter.number,
                "position": e.position,
                "is_active": e.is_active,
                "version": e.current_version.version if e.current_version else None,
                "spec": e.current_version.spec if e.current_version else None,
                "source": texts.get(e.key),
            }
            for e in exercises
        },
        "versions": ExerciseVersion.objects.filter(exercise__workbook__slug=slug).count(),
        "chapters": {
            c.chapter.number: (c.name, c.head, c.tail)
            for c in ChapterSource.objects.filter(chapter__workbook__slug=slug).select_related("chapter")
        },
    }


def _upload(client: Client, slug: str, name: str, data: bytes) -> Any:
    workbook = Workbook.objects.get(slug=slug)
    return client.post(
        "/admin/exercises/chapter/upload/",
        {"workbook": workbook.pk, "file": SimpleUploadedFile(name, data, content_type="application/x-yaml")},
    )


@pytest.mark.parametrize("slug", content.slugs())
def test_every_chapter_and_exercise_downloads_byte_identical(author_client: Client, slug: str) -> None:
    folder = DEFAULT_ROOT / slug
    sync(folder)
    again = sync(folder)  # a second sync of the same files writes nothing
    assert again.created == again.new_versions == again.updated == [] and again.unchanged > 0
    files = sorted((folder / "chapters").glob("*.yaml"))
    assert files
    for path in files:
        text = source.read_chapter(path)
        raw = path.read_bytes()
        number = int(loader._yaml(path)["number"])  # the number the loader sees
        chapter = Chapter.objects.get(workbook__slug=slug, number=number)
        response = author_client.get(f"/admin/exercises/chapter/{chapter.pk}/source/")
        assert response.status_code == 200
        assert response["Content-Type"] == "text/yaml; charset=utf-8"
        assert response["Content-Disposition"] == f'attachment; filename="{path.name}"'
        assert response.content == raw, path
        assert text.blocks, path
        for block in text.blocks:
            exercise = Exercise.objects.get(workbook__slug=slug, key=block.id)
            one = author_client.get(f"/admin/exercises/exercise/{exercise.pk}/source/")
            assert one.status_code == 200
            assert one.content == block.text.encode("utf-8"), (path, block.id)
            action = author_client.post(
                "/admin/exercises/exercise/", {"action": "download_yaml", "_selected_action": [exercise.pk]}
            )
            assert action.content == block.text.encode("utf-8"), (path, block.id)
            assert raw[raw.index(block.text.encode("utf-8")) :].startswith(one.content)
        # The blocks in order, between the head and the tail, are the file.
        assert b"".join(b.text.encode() for b in text.blocks) in raw


def test_the_editor_shows_the_block_as_written_and_an_edit_changes_only_its_line(author_client: Client) -> None:
    sync(DEFAULT_ROOT / SLUG)
    exercise = Exercise.objects.select_related("current_version").get(workbook__slug=SLUG, key="llama-7b")
    version = exercise.current_version
    assert version is not None
    block = selectors.exercise_source(exercise=exercise)
    assert PROMPT_LINE in block and block.startswith('  - number: "0.2"\n')
    page = author_client.get(f"/admin/exercises/exercise/{exercise.pk}/change/").content.decode()
    # The textarea holds the block as written (escaped as HTML text), comments and spelling kept.
    assert "$[d, d_{ff}]$ and $W_{down}$ of shape $[d_{ff}, d]$." in page
    assert "feedback: LLaMA&#x27;s LM head is untied" in page or "feedback: LLaMA's LM head is untied" in page
    assert "/source/" in page  # the download links

    # The same text again: nothing changes (no version, no write of the text).
    assert post_exercise_edit(author_client, exercise, block) == "redirect 302"
    assert ExerciseVersion.objects.filter(exercise=exercise).count() == 1
    # One prompt line edited, sent as a browser sends a textarea (CRLF line ends).
    edited = block.replace(PROMPT_LINE, EDITED_LINE)
    assert post_exercise_edit(author_client, exercise, edited.replace("\n", "\r\n")) == "redirect 302"
    after = Exercise.objects.select_related("current_version").get(pk=exercise.pk)
    assert after.current_version is not None and after.current_version.pk == version.pk  # prose: same version
    assert "as a plain number" in after.current_version.spec["prompt"]
    assert selectors.exercise_source(exercise=after) == edited
    chapter = author_client.get(f"/admin/exercises/chapter/{exercise.chapter_id}/source/").content.decode()
    original = chapter_file(SLUG, CHAPTER_FILE).decode()
    changed = [
        line
        for line in difflib.unified_diff(original.splitlines(), chapter.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed == [f"-{PROMPT_LINE.rstrip()}", f"+{EDITED_LINE.rstrip()}"]
    assert len(chapter.splitlines()) == len(original.splitlines())

    # A comment is the author's text but no change to the exercise: kept, and no new version.
    commented = edited.replace("    title: LLaMA 7B\n", "    title: LLaMA 7B\n    # Checked against the paper.\n")
    assert post_exercise_edit(author_client, exercise, commented) == "redirect 302"
    assert selectors.exercise_source(exercise=after) == commented
    assert ExerciseVersion.objects.filter(exercise=exercise).count() == 1
    # A grading edit makes a new version, as in the files.
    graded = commented.replace("      tolerance: 0.002\n", "      tolerance: 0.003\n")
    assert post_exercise_edit(author_client, exercise, graded) == "redirect 302"
    assert ExerciseVersion.objects.filter(exercise=exercise).count() == 2


def test_an_edit_that_does_not_read_names_its_line_and_saves_nothing(author_client: Client) -> None:
    sync(DEFAULT_ROOT / SLUG)
    exercise = Exercise.objects.get(workbook__slug=SLUG, key="llama-7b")
    before = snapshot(SLUG)
    block = selectors.exercise_source(exercise=exercise)
    broken = block.replace("    format: numeric\n", "    format: [numeric\n")
    page = post_exercise_edit(author_client, exercise, broken)
    assert "Not valid YAML at line" in page
    unknown = block.replace("    format: numeric\n", "    format: numerick\n")
    page = post_exercise_edit(author_client, exercise, unknown)
    assert "this exercise starts at line 94" in page and "format" in page
    assert snapshot(SLUG) == before


def test_an_uploaded_chapter_is_stored_as_sync_content_stores_it(author_client: Client, tmp_path: Path) -> None:
    folder = DEFAULT_ROOT / SLUG
    sync(folder)
    edited = (
        chapter_file(SLUG, CHAPTER_FILE)
        .decode()
        .replace(PROMPT_LINE, EDITED_LINE)  # prose
        .replace("    title: LLaMA 7B\n", "    title: LLaMA 7B\n    # Checked against the paper.\n")  # a comment
        .replace("      tolerance: 0.002\n", "      tolerance: 0.003\n")  # grading: a new version
    )
    # sync_content's way: the edited file in a copy of the workbook folder (code, presets and all).
    copy = tmp_path / SLUG
    copy.mkdir()
    for item in folder.iterdir():
        if item.name != "chapters":
            (copy / item.name).symlink_to(item)
    (copy / "chapters").mkdir()
    for path in (folder / "chapters").glob("*.yaml"):
        (copy / "chapters" / path.name).write_bytes(path.read_bytes())
    (copy / "chapters" / CHAPTER_FILE).write_bytes(edited.encode())
    with transaction.atomic():
        report = sync(copy)
        synced = snapshot(SLUG)
        transaction.set_rollback(True)
    assert report.new_versions == ["0.2"] and report.updated == []  # the prompt edit rides with the version
    # The admin's way, from the same starting point.
    response = _upload(author_client, SLUG, CHAPTER_FILE, edited.encode())
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert snapshot(SLUG) == synced
    chapter = Chapter.objects.get(workbook__slug=SLUG, number=0)
    download = author_client.get(f"/admin/exercises/chapter/{chapter.pk}/source/")
    assert download.content == edited.encode()
    # Uploading it again changes nothing.
    assert _upload(author_client, SLUG, CHAPTER_FILE, edited.encode()).status_code == 302
    assert snapshot(SLUG) == synced


def test_a_broken_upload_names_the_line_and_changes_nothing(author_client: Client) -> None:
    sync(DEFAULT_ROOT / SLUG)
    before = snapshot(SLUG)
    original = chapter_file(SLUG, CHAPTER_FILE).decode()
    not_yaml = original.replace("    title: LLaMA 7B\n", "    title: [LLaMA 7B\n")
    page = _upload(author_client, SLUG, CHAPTER_FILE, not_yaml.encode())
    assert page.status_code == 200
    assert "not valid YAML at line 97, column 9" in page.content.decode()
    assert "in exercise &quot;0.2&quot;, which starts at line 94" in page.content.decode()
    no_kind = original.replace(
        "    kind: derive\n    format: numeric\n    givens: {d: 4096", "    format: numeric\n    givens: {d: 4096"
    )
    assert no_kind != original
    page = _upload(author_client, SLUG, CHAPTER_FILE, no_kind.encode())
    text = page.content.decode()
    assert page.status_code == 200 and "line 94 (exercise 2): exercises.1.kind" in text
    assert snapshot(SLUG) == before


def test_learners_cannot_download_and_instructors_cannot_upload(make_user: Callable[..., User]) -> None:
    sync(DEFAULT_ROOT / SLUG)
    exercise = Exercise.objects.get(workbook__slug=SLUG, key="llama-7b")
    client = Client()
    client.force_login(make_user("sam", role=Role.STUDENT))
    for url in (
        f"/admin/exercises/exercise/{exercise.pk}/source/",
        f"/admin/exercises/chapter/{exercise.chapter_id}/source/",
    ):
        response = client.get(url)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]  # answers stay out of reach
    client.force_login(make_user("ivy", role=Role.INSTRUCTOR))
    assert client.get(f"/admin/exercises/exercise/{exercise.pk}/source/").status_code == 200  # may view
    before = snapshot(SLUG)
    upload = _upload(client, SLUG, CHAPTER_FILE, chapter_file(SLUG, CHAPTER_FILE))
    assert upload.status_code == 403
    assert snapshot(SLUG) == before


@pytest.mark.parametrize("slug", content.slugs())
def test_a_chapter_text_reads_as_the_loader_reads_its_file(slug: str) -> None:
    """``chapter_load`` (an upload, an edit) gives each chapter the spec ``load_workbook`` gives it
    (scenarios, presets and code folders inlined the same way)."""
    folder = DEFAULT_ROOT / slug
    presets = loader.read_presets(folder)
    by_number = {c.number: c for c in content.workbook(slug).chapters}
    for path in sorted((folder / "chapters").glob("*.yaml")):
        text = path.read_bytes().decode()
        spec, kept = source.chapter_load(
            text, name=path.name, presets=presets, code=source.folder_code(folder, expected=None)
        )
        assert spec.model_dump(mode="json") == by_number[spec.number].model_dump(mode="json"), path
        assert kept.text == text and kept.name == path.name


@pytest.mark.parametrize("slug", content.slugs())
def test_an_exercise_without_its_text_is_edited_from_a_block_that_reads_back_the_same(slug: str) -> None:
    """An exercise that has no author's text (made in the admin before texts were kept) is shown
    as a block written from its spec: in its chapter, that block reads back as the same spec,
    scenarios and presets included (what the loader inlined is taken out again)."""
    folder = DEFAULT_ROOT / slug
    presets = loader.read_presets(folder)
    specs = {e.id: e.model_dump(mode="json") for e in content.exercises(slug)}
    codes = {key: spec["code"] for key, spec in specs.items() if spec.get("code")}
    for path in sorted((folder / "chapters").glob("*.yaml")):
        text = source.read_chapter(path)
        for i, block in enumerate(text.blocks):
            assert block.id is not None
            blocks = [b.text for b in text.blocks]
            blocks[i] = source.dump_block(specs[block.id])
            chapter, _ = source.chapter_load(
                source.join(text.head, blocks, text.tail),
                name=path.name,
                presets=presets,
                code=source.kept_code(codes),
            )
            assert chapter.exercises[i].model_dump(mode="json") == specs[block.id], (path, block.id)


def test_an_exercise_without_its_text_saves_unchanged_from_the_editor(author_client: Client) -> None:
    exercise = Exercise.objects.select_related("current_version").get(workbook__slug=SLUG, key="llama-7b")
    ExerciseSource.objects.filter(exercise=exercise).delete()
    version = exercise.current_version
    assert version is not None
    block = selectors.exercise_source(exercise=exercise)
    assert block == source.dump_block(version.spec) and block.startswith("  - number: '0.2'\n")
    assert post_exercise_edit(author_client, exercise, block) == "redirect 302"
    after = ExerciseVersion.objects.get(pk=version.pk)
    assert (after.spec, after.content_hash) == (version.spec, version.content_hash)
    assert ExerciseVersion.objects.filter(exercise=exercise).count() == 1
    assert selectors.exercise_source(exercise=exercise) == block  # kept as the text to edit from now on


@pytest.mark.parametrize("slug", content.slugs())
def test_chapters_synced_before_texts_were_kept_are_written_and_read_back_the_same(slug: str) -> None:
    """A chapter with no stored text (synced before this, or made in the admin) is written from its
    rows and specs (its scenarios too); that text reads back as the stored specs, so such exercises
    stay editable in the admin."""
    ChapterSource.objects.filter(chapter__workbook__slug=slug).delete()
    ExerciseSource.objects.filter(exercise__workbook__slug=slug).delete()
    folder = DEFAULT_ROOT / slug
    presets, codes = loader.read_presets(folder), selectors.code_synced(slug=slug)
    for chapter in Chapter.objects.filter(workbook__slug=slug):
        text = selectors.chapter_source(chapter=chapter)
        spec, _ = source.chapter_load(text.text, name=text.name, presets=presets, code=source.kept_code(codes))
        stored = {
            e.key: e.current_version.spec
            for e in Exercise.objects.filter(chapter=chapter, is_active=True).select_related("current_version")
            if e.current_version is not None
        }
        assert {e.id: e.model_dump(mode="json") for e in spec.exercises} == stored, text.name


def test_a_scenario_exercise_without_its_text_saves_unchanged_from_the_editor(author_client: Client) -> None:
    exercise = Exercise.objects.select_related("current_version").get(workbook__slug=SLUG, key="llama-7b-kv-cache")
    ChapterSource.objects.filter(chapter=exercise.chapter).delete()
    ExerciseSource.objects.filter(exercise__chapter=exercise.chapter).delete()
    version = exercise.current_version
    assert version is not None and version.spec["vary"]["scenario"]["name"] == "model"
    block = selectors.exercise_source(exercise=exercise)
    assert "    scenario: model\n" in block and "seed" not in block  # as an author writes it
    assert post_exercise_edit(author_client, exercise, block) == "redirect 302"
    after = ExerciseVersion.objects.get(pk=version.pk)
    assert (after.spec, after.content_hash) == (version.spec, version.content_hash)
    assert ExerciseVersion.objects.filter(exercise=exercise).count() == 1


def test_an_exercise_added_in_the_admin_joins_the_chapter_file_as_written(author_client: Client) -> None:
    sync(DEFAULT_ROOT / SLUG)
    exercise = Exercise.objects.get(workbook__slug=SLUG, key="llama-7b")
    mapping = "\n".join(
        line[4:]
        for line in selectors.exercise_source(exercise=exercise)
        .replace('  - number: "0.2"', '    number: "0.99"')
        .replace("    id: llama-7b\n", "    id: llama-7b-again\n    # Added in the admin.\n")
        .replace("    title: LLaMA 7B\n", "    title: LLaMA 7B, again\n")
        .splitlines()
    )  # pasted as a mapping (no `- `), as an author may
    response = author_client.post(
        "/admin/exercises/exercise/add/",
        {
            "chapter": exercise.chapter_id,
            "spec_text": mapping.replace("\n", "\r\n"),
            "versions-TOTAL_FORMS": "0",
            "versions-INITIAL_FORMS": "0",
            "versions-MIN_NUM_FORMS": "0",
            "versions-MAX_NUM_FORMS": "1000",
        },
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    added = Exercise.objects.get(workbook__slug=SLUG, key="llama-7b-again")
    block = selectors.exercise_source(exercise=added)
    assert block.startswith('  - number: "0.99"\n    id: llama-7b-again\n    # Added in the admin.\n')
    chapter = author_client.get(f"/admin/exercises/chapter/{exercise.chapter_id}/source/").content
    assert chapter == chapter_file(SLUG, CHAPTER_FILE) + block.encode()  # the file, and the new block after it


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_chapter_text_is_cut_at_its_items_whatever_their_layout(newline: str) -> None:
    text = newline.join(
        [
            "number: 1  # a comment on the head",
            "title: Cuts",
            "exercises:",
            "# before the first item: the head's",
            "- number: '1.1'",
            "  id: one",
            "  prompt: 'a line\u2028separator in a string: YAML counts a line there'",
            "  # a trailing comment: the item's",
            "",
            "-",
            "  number: '1.2'",
            "  id: two",
            "  hints: [a, b]",
            "# after the last item, before the next key: the last item's",
            "scenarios: {}",
            "# the tail",
            "",
        ]
    )
    cut = source.split_chapter(text)
    assert cut.text == text and cut.number == 1
    assert [b.id for b in cut.blocks] == ["one", "two"]
    assert cut.head.endswith(f"# before the first item: the head's{newline}")
    assert cut.blocks[0].text.startswith("- number: '1.1'") and cut.blocks[0].text.endswith(
        f"the item's{newline}{newline}"
    )
    assert cut.blocks[1].text.startswith(f"-{newline}  number: '1.2'") and "before the next key" in cut.blocks[1].text
    assert cut.tail == f"scenarios: {{}}{newline}# the tail{newline}"
    assert [b.line for b in cut.blocks] == [5, 11]
    inline = source.split_chapter("number: 2\ntitle: Inline\nexercises: [{number: '2.1', id: x}]\n")
    assert inline.blocks == () and inline.head.startswith("number: 2")
    with pytest.raises(
        source.SourceError,
        match=r"line 4, column 5: .*flow sequence that starts at line 3, column 10\).*in exercise '3.1', which starts at line 2",
    ):
        source.split_chapter("exercises:\n- number: '3.1'\n  title: [unclosed\n  id: y\n")


def test_the_items_lines_are_those_ruamel_round_trip_finds() -> None:
    """The cut uses libyaml's node marks for speed (content/source.py); ruamel.yaml's round-trip
    parser puts every item of every chapter file on the same line."""
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    for slug in content.slugs():
        for path in sorted((DEFAULT_ROOT / slug / "chapters").glob("*.yaml")):
            items = rt.load(path.read_bytes().decode())["exercises"]
            ours = [b.line for b in source.read_chapter(path).blocks]
            assert ours == [items.lc.item(i)[0] + 1 for i in range(len(items))], path


class _Form(HTMLParser):
    """The fields of an admin change form as a browser would submit them unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "checkbox", "file"):
            self.data[name] = a.get("value") or ""
        elif tag == "input" and name and a.get("type") == "checkbox" and "checked" in a:
            self.data[name] = "on"
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select] = a.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea] += data


def test_a_chapter_field_edited_in_the_admin_warns_that_the_file_keeps_its_text(author_client: Client) -> None:
    sync(DEFAULT_ROOT / SLUG)
    chapter = Chapter.objects.get(workbook__slug=SLUG, number=0)
    url = f"/admin/exercises/chapter/{chapter.pk}/change/"
    form = _Form()
    form.feed(author_client.get(url).content.decode())
    form.data["title"] = "Counting parameters, retitled"
    form.data["intro"] = form.data["intro"].removeprefix("\n")  # the newline Django's textarea template adds
    response = author_client.post(url, form.data, follow=True)
    assert response.status_code == 200
    # (The form strips the intro's last newline, Django's CharField way: that is an edit too.)
    assert "download does not show this edit (intro, title)" in response.content.decode()
    assert Chapter.objects.get(pk=chapter.pk).title == "Counting parameters, retitled"
    assert author_client.get(f"/admin/exercises/chapter/{chapter.pk}/source/").content == chapter_file(
        SLUG, CHAPTER_FILE
    )
