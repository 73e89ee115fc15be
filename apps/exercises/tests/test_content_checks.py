"""check_content catches each class of authoring error, and names where it is."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from apps.exercises.content.checks import check_exercise
from apps.exercises.content.loader import LoadError, load_workbook, read_cases
from apps.exercises.content.report import DEFAULT_ROOT, check_workbooks
from apps.exercises.content.schema import ExerciseSpec
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.cache import CachedRunner, default_directory

NUMERIC: dict[str, Any] = {
    "number": "0.1",
    "id": "kv-cache",
    "title": "KV cache",
    "kind": "derive",
    "format": "numeric",
    "givens": {"L": 32, "s": 4096, "d": 4096},
    "derived": {"kv": "2 * L * s * d * 2"},
    "prompt": "L = {{L}}, s = {{s}}, d = {{d}}. In GB?",
    "answer": {
        "value": "kv",
        "unit": "bytes",
        "input_unit": "GB",
        "tolerance": 0.005,
        "sig_figs": 3,
        "mistakes": [{"value": "kv / 2", "feedback": "Only K."}],
    },
    "explanation": "{{kv}} bytes = {{answer / 1e9 | sig3}} GB.",
}


def problems(spec: dict[str, Any]) -> list[str]:
    return check_exercise(ExerciseSpec.model_validate(spec))


def variant(**changes: Any) -> dict[str, Any]:
    spec = copy.deepcopy(NUMERIC)
    for path, value in changes.items():
        target = spec
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return spec


def test_a_sound_exercise_has_no_problems() -> None:
    assert problems(NUMERIC) == []


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"answer__value": "kv / zero"}, "unknown name 'zero'"),
        ({"answer__value": "1 / 0"}, "division by zero"),
        ({"answer__unit": "furlongs"}, "unknown unit 'furlongs'"),
        ({"answer__input_unit": "tokens/s"}, "measures a throughput"),
        ({"prompt": "s = {{s}}, d = {{d}}. In GB?"}, "given 'L' never appears in the prompt"),
        ({"explanation": "{{ kv | shout }}"}, "unknown filter"),
        ({"explanation": "bad $ x^2 $ math"}, "math not rendered"),
        ({"answer__tolerance": 0.6}, "mistakes[0] is within the tolerance"),
        (
            {"answer__tolerance": 0},
            "rounded to 3 figures (2.15 GB) is rejected",
        ),  # only an exact answer refuses its rounding
        ({"kind": "build"}, "a build exercise cannot use the numeric format"),
    ],
)
def test_each_problem_is_caught(changes: dict[str, Any], fragment: str) -> None:
    found = problems(variant(**changes))
    assert any(fragment in p for p in found), found


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({**NUMERIC, "answer": None}, "needs `answer`"),
        (
            {
                **NUMERIC,
                "format": "choice",
                "answer": None,
                "options": [{"text": "a", "feedback": "x"}, {"text": "b", "feedback": "y"}],
            },
            "exactly one correct",
        ),
        ({**NUMERIC, "givens": {"GB": 1}}, "reserved"),
        ({**NUMERIC, "givens": {"kv": 1}}, "both given and derived"),
        ({**NUMERIC, "number": "one"}, "must look like"),
        ({**NUMERIC, "id": "KV_cache"}, "lowercase letters, digits and dashes"),
        ({k: v for k, v in NUMERIC.items() if k != "id"}, "id\n  Field required"),
        ({**NUMERIC, "explanation": ""}, "explanation"),
        ({**NUMERIC, "surprise": 1}, "Extra inputs"),
    ],
)
def test_schema_rejects_malformed_exercises(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ExerciseSpec.model_validate(spec)


def test_order_constraints_must_hold_for_the_listed_order() -> None:
    spec = {
        **NUMERIC,
        "format": "order",
        "kind": "design",
        "answer": None,
        "prompt": "{{L}} {{s}} {{d}}",
        "explanation": "A before B.",
        "steps": [{"id": "a", "text": "A"}, {"id": "b", "text": "B"}],
        "constraints": [["b", "a"]],
    }
    assert any("breaks its own constraint" in p for p in problems(spec))


def sandboxed() -> CachedRunner:
    """The sandbox, as check_content runs it: real containers of the sandbox image, settled runs
    read from the verdict cache."""
    return CachedRunner(sandbox_selectors.runner("tests"), default_directory())


@pytest.fixture
def workbook_copy(tmp_path: Path) -> Path:
    """A scratch copy of Transformer Math to break on purpose."""
    target = tmp_path / "transformer-math"
    shutil.copytree(DEFAULT_ROOT / "transformer-math", target)
    return target


def _edit_chapter0(folder: Path, edit: Any) -> None:
    path = folder / "chapters" / "00-parameter-counting.yaml"
    data = yaml.safe_load(path.read_text())
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def test_an_exercise_id_used_twice_in_a_workbook_names_both_exercises(workbook_copy: Path) -> None:
    """Ids are unique across the workbook's chapters, not only within one."""
    path = workbook_copy / "chapters" / "04-kv-cache.yaml"
    data = yaml.safe_load(path.read_text())
    first = yaml.safe_load((workbook_copy / "chapters" / "00-parameter-counting.yaml").read_text())["exercises"][0]
    data["exercises"][1]["id"] = first["id"]
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    with pytest.raises(LoadError) as caught:
        load_workbook(workbook_copy, compute_expected=False)
    second = data["exercises"][1]
    assert (
        f"exercise id {first['id']!r} is used twice in the workbook: by 0.1 ({first['title']}) "
        f"and by {second['number']} ({second['title']})"
    ) in str(caught.value)
    report = check_workbooks(workbook_copy.parent, ["transformer-math"], runner=sandboxed())[0]
    assert any(f"exercise id {first['id']!r} is used twice" in p for p in report.problems)


def test_wrong_buggy_line_is_caught(workbook_copy: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        next(e for e in data["exercises"] if e["number"] == "0.6")["buggy_lines"] = [7]

    _edit_chapter0(workbook_copy, edit)
    report = check_workbooks(
        workbook_copy.parent, ["transformer-math"], runner=sandboxed(), chapter_glob="00-*", consistency=False
    )[0]
    assert any("buggy_lines [7] differ from the lines the fix changes [8]" in p for p in report.problems)


def test_starter_that_passes_and_reference_that_fails_are_caught(workbook_copy: Path) -> None:
    code = workbook_copy / "code" / "0.5-param-count"
    (code / "starter.py").write_text((code / "solution.py").read_text())
    (code / "solution.py").write_text("def param_count(d, n_layers, vocab_size):\n    return 12 * n_layers * d * d\n")
    # Expected values must not come from a broken reference: give them all explicitly.
    cases = [c for c in read_cases(code / "tests.py") if "expected" in c]
    (code / "tests.py").write_text(f"CASES = {cases!r}\n")
    report = check_workbooks(
        workbook_copy.parent, ["transformer-math"], runner=sandboxed(), chapter_glob="00-*", consistency=False
    )[0]
    assert any("the reference solution fails its tests" in p for p in report.problems), report.problems
    assert any("starter code passes every test" in p for p in report.problems), report.problems


def test_load_errors_name_the_file_and_field(workbook_copy: Path) -> None:
    _edit_chapter0(workbook_copy, lambda data: data["exercises"][0].pop("title"))
    with pytest.raises(LoadError) as info:
        load_workbook(workbook_copy, compute_expected=False)
    assert "00-parameter-counting.yaml" in str(info.value)
    assert "exercises.0.title: Field required" in str(info.value)


def test_tests_files_are_read_as_literals_never_run(tmp_path: Path) -> None:
    path = tmp_path / "tests.py"
    path.write_text("import os\nos.system('touch pwned')\nCASES = [{'id': 'a', 'args': [1]}]\n")
    assert read_cases(path) == [{"id": "a", "args": [1]}]
    assert not (tmp_path / "pwned").exists()
    path.write_text("CASES = [make_case()]\n")
    with pytest.raises(LoadError, match="literal"):
        read_cases(path)


def test_the_transformer_math_workbook_is_sound() -> None:
    # What crosses exercises on learners' numbers is proven by check_content (test_commands.py).
    report = check_workbooks(DEFAULT_ROOT, ["transformer-math"], runner=sandboxed(), consistency=False)[0]
    assert report.problems == []
    assert report.exercises == 52


def test_a_wrong_solution_that_passes_is_a_problem_and_one_without_its_misconception_does_not_load(
    workbook_copy: Path,
) -> None:
    folder = workbook_copy / "code" / "0.5-param-count"
    (folder / "wrong").mkdir(exist_ok=True)
    # Chapter 0's own catalogue (0.5 and 0.6), which its tests fail: the two added here come on top.
    catalogue = sum(len(list(wrong.glob("*.py"))) for wrong in (workbook_copy / "code").glob("0.*/wrong"))
    # "Wrong" on purpose but in fact the reference: the tests cannot fail it, and the check says so.
    (folder / "wrong" / "copies_the_reference.py").write_text(
        "# copies the reference (a stand-in for a wrong solution the tests miss)\n"
        + (folder / "solution.py").read_text()
    )
    (folder / "wrong" / "forgets_the_embedding.py").write_text(
        "# forgets the tied embedding table\ndef param_count(d, n_layers, vocab_size):\n    return 12 * n_layers * d * d\n"
    )
    report = check_workbooks(
        workbook_copy.parent, ["transformer-math"], runner=sandboxed(), chapter_glob="00-*", consistency=False
    )[0]
    passing = [p for p in report.problems if "wrong solution" in p]
    assert len(passing) == 1 and "copies_the_reference" in passing[0], report.problems
    assert report.wrong_solutions == catalogue + 2
    (folder / "wrong" / "no_comment.py").write_text("def param_count(d, n_layers, vocab_size):\n    return 0\n")
    with pytest.raises(LoadError, match="starts with a comment naming the misconception"):
        load_workbook(workbook_copy, compute_expected=False)


def test_a_choice_whose_longest_option_is_the_answer_is_refused() -> None:
    choice = {
        **NUMERIC,
        "kind": "trace",
        "format": "choice",
        "answer": None,
        "explanation": "",
        "options": [
            {
                "text": "Because the cache grows with every token of every sequence in the batch, it dominates",
                "correct": True,
                "feedback": "Yes.",
            },
            {"text": "The weights", "feedback": "No."},
            {"text": "Activations", "feedback": "No."},
        ],
    }
    assert any("picking the longest finds it" in p for p in problems(choice))
    parallel = copy.deepcopy(choice)
    parallel["options"][0]["text"] = "The KV cache"
    assert not any("longest" in p for p in problems(parallel))


def test_a_mild_tell_is_reported_as_a_warning_beside_the_counts(workbook_copy: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        choice = next(e for e in data["exercises"] if e["number"] == "0.3")
        correct = next(o for o in choice["options"] if o.get("correct"))
        correct["text"] = correct["text"].rstrip(".") + "; the rest is tables"

    _edit_chapter0(workbook_copy, edit)
    report = check_workbooks(
        workbook_copy.parent, ["transformer-math"], runner=None, chapter_glob="00-*", consistency=False
    )[0]
    assert report.problems == []
    assert any(w.startswith("0.3 ") and "argues for itself" in w for w in report.warnings), report.warnings
    assert report.single_choices == 2  # 0.3 and 0.4
