"""sync_content, check_content and export_content from the command line."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import override_settings

from apps.exercises.content.report import DEFAULT_ROOT, fingerprint, recorded_run
from apps.exercises.models import Exercise
from apps.exercises.tests import content, scenario_content
from apps.sandbox import selectors as sandbox_selectors

# Where make test's check_content phase records its run (scripts/test.sh).
RECORD = DEFAULT_ROOT.parents[1] / "var" / "check-content.json"


def export(slug: str) -> dict[str, object]:
    out = StringIO()
    call_command("export_content", workbook=slug, stdout=out)
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


def test_export_lists_every_exercise_with_answers_computed_independently() -> None:
    data = export("transformer-math")
    assert data["count"] == content.exercise_count("transformer-math")
    items = {e["number"]: e for e in data["exercises"]}  # type: ignore[attr-defined]
    # Recomputed here by hand, not read from the content files.
    assert items["0.1"]["answer"] == 12 * 12 * 768**2 + 50257 * 768 + 1024 * 768 + 2 * 768 == 124_320_000
    assert items["0.2"]["answer"] == 32 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    assert items["0.7"]["answer"] == 46_702_792_704  # Mixtral with GQA: 46.7B, as Mistral reports
    assert items["1.2"]["answer"] == pytest.approx(8 * 2048 * 4096**2 + 4 * 2048**2 * 4096, rel=1e-9)
    assert items["4.1"]["answer"] == 2 * 32 * 4096 * 4096 * 2  # bytes; 2.15 GB, the seed's "2.0 GB" is GiB
    assert items["4.4"]["answer"] == (80e9 - 6.74e9 * 2) // (2 * 32 * 4096 * 4096 * 2) == 30
    assert items["7.5"]["answer"] == 4  # the seed asserted 25 without a calculation
    assert items["8.2"]["answer"] == pytest.approx(6 * 7e9 * 140e9)  # 5.88e21, not the seed's 5.88e15
    assert items["9.1"]["answer"] == 11_338_142_720
    assert items["9.3"]["answer"] == pytest.approx(13e9 * 2 + 50 * 2 * 40 * 4096 * 8 * 128 * 2)
    assert items["0.6"]["buggy_lines"] == [8]
    assert items["2.5"]["order"][0] == "project_q"
    assert {e["format"] for e in items.values()} == {"numeric", "choice", "order", "lines", "table", "code"}
    for e in items.values():
        if e["format"] == "numeric":
            assert set(e) >= {"answer", "unit", "tolerance"}


def test_export_lists_the_scaling_book_and_roofline_with_their_corrected_answers() -> None:
    book = export("scaling-book")
    assert book["count"] == content.exercise_count("scaling-book")
    assert len(book["skills"]) == content.skill_count("scaling-book")  # type: ignore[arg-type]
    items = {e["number"]: e for e in book["exercises"]}  # type: ignore[attr-defined]
    # The seed's slips, recomputed here by hand: the KV cache 10× too small, the halved all-reduce,
    # a "below 5%" bubble met at exactly 5%, and an MoE token budget 1000× too large.
    assert items["3.5"]["answer"] == 2 * 80 * 8 * 128 * 8192 * 32 * 2
    assert items["4.2"]["answer"] == pytest.approx(2 * 7 / 8 * 4 * 8192 * 8192 * 2)  # batch 4, 8k tokens, d 8192
    assert items["4.3"]["answer"] == 58 and 3 / (57 + 3) == 0.05 > 3 / (58 + 3)
    assert items["10.7"]["parts"]["d_a"]["answer"] == pytest.approx(6e17 / (6 * 1e9))
    assert {e["format"] for e in items.values()} >= {"numeric", "parts", "table", "code", "choice", "order", "lines"}
    roofline = export("roofline")
    assert roofline["count"] == content.exercise_count("roofline")
    q3 = {e["number"]: e for e in roofline["exercises"]}["q3"]  # type: ignore[attr-defined]
    ridge = 989.4e12 / 3.35e12  # exact crossover of 2BD/(4B + D) = ridge, int8 weights, bf16 activations
    for key, d in (("b_4096", 4096), ("b_1024", 1024)):
        assert q3["parts"][key]["answer"] == pytest.approx(ridge * d / (2 * d - 4 * ridge))
    assert q3["parts"]["intensity"]["expression"] == "2*B*D/(4*B + D)"


def test_export_unknown_workbook_is_an_error() -> None:
    with pytest.raises(CommandError, match="no workbook 'nope'"):
        call_command("export_content", workbook="nope")


def test_check_content_passes_on_the_real_content() -> None:
    """Every workbook passes check_content. make test runs it first as a phase of its own, with
    ``--record var/check-content.json``: a passing run of exactly these inputs (content, checking
    code, sandbox image) is read from there rather than made twice."""
    image = sandbox_selectors.runner("check_content").image
    output = recorded_run(RECORD, settings.CONTENT_DIRS, image)
    if output is None:
        out = StringIO()
        call_command("check_content", stdout=out)
        output = out.getvalue()
    for slug in content.slugs():
        assert f"{slug}: {content.exercise_count(slug)} exercises, ok (" in output
    assert "all workbooks: numbers vary in" in output
    assert "two learners share numbers on" in output  # the consistency checks ran


def test_check_content_records_a_full_passing_run_for_these_inputs_only(tmp_path: Path) -> None:
    root = tmp_path / "workbooks"
    scenario_content.write(root)  # a small workbook with a scenario: the full run takes seconds
    record = tmp_path / "check.json"
    out = StringIO()
    with override_settings(CONTENT_DIR=root, CONTENT_DIRS=[root]):
        call_command("check_content", "--record", str(record), stdout=out)
        image = sandbox_selectors.runner("check_content").image
        assert recorded_run(record, root, image) == out.getvalue()
        assert recorded_run(record, root, image + "-other") is None  # another image
        book = root / scenario_content.SLUG / "workbook.yaml"
        book.write_text(book.read_text() + "\n")
        assert recorded_run(record, root, image) is None  # the content changed
        record.unlink()
        call_command("check_content", "--record", str(record), "--workbook", scenario_content.SLUG, stdout=StringIO())
        assert not record.exists()  # only a full run is recorded


def test_check_content_fails_loudly_on_broken_content(tmp_path: Path) -> None:
    root = tmp_path / "workbooks"
    shutil.copytree(DEFAULT_ROOT / "transformer-math", root / "transformer-math")
    chapter = root / "transformer-math" / "chapters" / "04-kv-cache.yaml"
    chapter.write_text(chapter.read_text().replace("tolerance: 0", "tolerance: 0.9", 1))
    out = StringIO()
    with override_settings(CONTENT_DIR=root, CONTENT_DIRS=[root]), pytest.raises(CommandError, match="content problem"):
        call_command("check_content", "--code", "skip", "--chapter", "04-*", stdout=out)
    assert "problem(s)" in out.getvalue()


@pytest.mark.django_db
def test_sync_content_reports_and_is_idempotent() -> None:
    out = StringIO()
    call_command("sync_content", stdout=out)
    n = content.exercise_count("transformer-math")
    assert f"transformer-math: 0 created, 0 new versions, 0 updated, {n} unchanged, 0 retired" in out.getvalue()


# ---- several content roots (CONTENT_DIRS) ----------------------------------------------------------


def clashing_root(tmp_path: Path) -> Path:
    """A course's root holding a workbook whose slug is already ours."""
    root = tmp_path / "course"
    shutil.copytree(DEFAULT_ROOT / "roofline", root / "roofline")
    return root


def test_a_slug_in_two_content_roots_is_an_error_naming_both_files(tmp_path: Path) -> None:
    course = clashing_root(tmp_path)
    ours, theirs = DEFAULT_ROOT / "roofline" / "workbook.yaml", course / "roofline" / "workbook.yaml"
    expected = (
        f"workbook slug 'roofline' is in two content roots: {ours} and {theirs}; rename one (its folder and its slug)"
    )
    with override_settings(CONTENT_DIRS=[DEFAULT_ROOT, course]):
        for command, args in (
            ("sync_content", []),
            ("sync_content", ["--workbook", "transformer-math"]),  # any clash stops it: the roots are one namespace
            ("check_content", ["--code", "skip", "--workbook", "roofline"]),
            ("export_content", ["--workbook", "roofline"]),
        ):
            with pytest.raises(CommandError) as raised:
                call_command(command, *args, stdout=StringIO(), stderr=StringIO())
            assert str(raised.value) == expected, command


def test_a_missing_content_root_is_an_error_naming_it(tmp_path: Path) -> None:
    gone = tmp_path / "not-there"
    with override_settings(CONTENT_DIRS=[DEFAULT_ROOT, gone]):
        for command, args in (("sync_content", []), ("check_content", ["--code", "skip"])):
            with pytest.raises(CommandError, match=f"content root {gone} is not a directory"):
                call_command(command, *args, stdout=StringIO())


@pytest.mark.django_db
def test_a_second_root_is_checked_synced_and_exported_beside_ours(tmp_path: Path) -> None:
    course = tmp_path / "course"
    scenario_content.write(course)
    with override_settings(CONTENT_DIRS=[DEFAULT_ROOT, course]):
        out = StringIO()
        call_command("check_content", "--code", "skip", "--workbook", scenario_content.SLUG, stdout=out)
        assert f"{scenario_content.SLUG}: 4 exercises, ok (" in out.getvalue()
        out = StringIO()
        call_command("sync_content", stdout=out)  # every root: ours unchanged, the course's created
        assert f"{scenario_content.SLUG}: 4 created, 0 new versions" in out.getvalue()
        n = content.exercise_count("transformer-math")
        assert f"transformer-math: 0 created, 0 new versions, 0 updated, {n} unchanged, 0 retired" in out.getvalue()
        assert Exercise.objects.filter(workbook__slug=scenario_content.SLUG, is_active=True).count() == 4
        data = export(scenario_content.SLUG)
        assert data["count"] == 4
        assert export("roofline")["count"] == content.exercise_count("roofline")  # ours still found
    with pytest.raises(CommandError, match=f"no workbook '{scenario_content.SLUG}'"):
        export(scenario_content.SLUG)  # without the root, the course's workbook is not there


def test_the_recorded_check_covers_every_content_root(tmp_path: Path) -> None:
    course = tmp_path / "course"
    scenario_content.write(course)
    image = "mlsys-sandbox:any"
    roots = [DEFAULT_ROOT, course]
    record = tmp_path / "check.json"
    record.write_text(json.dumps({"fingerprint": fingerprint(roots, image), "output": "all ok\n"}))
    assert recorded_run(record, roots, image) == "all ok\n"
    assert recorded_run(record, [DEFAULT_ROOT], image) is None  # a root fewer
    assert recorded_run(record, [course, DEFAULT_ROOT], image) is None  # in another order
    book = course / scenario_content.SLUG / "workbook.yaml"
    book.write_text(book.read_text() + "\n")
    assert recorded_run(record, roots, image) is None  # a file of the second root changed
