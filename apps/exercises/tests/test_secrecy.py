"""No text a learner reads before solving states an answer, however the number is written."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apps.exercises.content.checks import check_chapter, check_exercise
from apps.exercises.content.loader import load_workbook
from apps.exercises.content.render import render
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.content.resolve import resolve
from apps.exercises.content.schema import ChapterSpec, ExerciseSpec
from apps.exercises.content.secrecy import Answer, chapter_leaks, exercise_leaks, leaks, plain_text
from apps.exercises.grading.numeric import NumericTarget
from apps.exercises.grading.units import Dim, unit

# Transformer-math 4.5: LLaMA 7B's KV cache per token, asked in KiB to three figures.
PER_TOKEN = Answer.of("answer", NumericTarget(524288.0, Dim.of("byte"), unit("KiB"), 0.005, sig_figs=3), "bytes")


def answer(value: float, unit_text: str, *, sig_figs: int = 3, tolerance: float = 0.005) -> Answer:
    u = unit(unit_text)
    return Answer.of("answer", NumericTarget(value * u.scale, u.dim, u, tolerance, sig_figs=sig_figs))


def found(text: str, *answers: Answer, public: tuple[float, ...] = ()) -> list[str]:
    return [leak.written for leak in leaks(text, answers or [PER_TOKEN], public)]


# ---- every way of writing a number ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("each token's cache takes 524,288 bytes", "524,288 bytes"),  # the outside review's case
        ("each token adds 524288 bytes", "524288 bytes"),
        ("each token adds 524 288 bytes", "524 288 bytes"),
        ("each token adds 524\u2009288 bytes", "524\u2009288 bytes"),  # thin space
        ("each token adds 524\u202f288 bytes", "524\u202f288 bytes"),  # narrow no-break space
        ("each token adds 524,288 bytes per token", "524,288 bytes"),
        ("the cache per token is 524,288", "524,288"),  # no unit, but six figures
        ("<p>a table cell</p><table><tr><td>524,288</td></tr></table>", "524,288"),
        ("$2Ld\\,b = 524,288$ bytes", "524,288 bytes"),  # MathML: <mn>524,288</mn>
        ("$524{,}288$ bytes", "524,288 bytes"),  # MathML: <mn>524</mn><mo>,</mo><mn>288</mn>
        ("$524\\,288$ bytes", "524\u2009288 bytes"),  # MathML: <mspace/>
        ("$2^{19}$ bytes", "2^19 bytes"),
        ("5.24e5 bytes", "5.24e5 bytes"),
        ("5.24×10⁵ bytes", "5.24×10⁵ bytes"),
        ("5.24 × 10^5 bytes", "5.24 × 10^5 bytes"),
        ("$5.24 \\times 10^{5}$ bytes", "5.24×10^5 bytes"),  # MathML: <msup>
        ("512 KiB per token", "512 KiB"),
        ("$512\\,\\text{KiB}$", "512\u2009KiB"),
        ("half a mebibyte, 0.5 MiB", "0.5 MiB"),
        ("524 kB", "524 kB"),
        ("524.3 kB", "524.3 kB"),
        ("0.52 MB", "0.52 MB"),  # two figures, the prompt asks three: still specific
        ("0.000488 GiB", "0.000488 GiB"),
    ],
)
def test_every_way_of_writing_the_answer_is_caught(text: str, written: str) -> None:
    assert found(text) == [written]


def test_rendered_text_reads_as_a_learner_sees_it() -> None:
    html = render("$2Ld\\,b = {{2*L*d*b}}$ bytes, $5.24 \\times 10^{5}$", {"L": 32, "d": 4096, "b": 2})
    assert "<mn>524,288</mn>" in html
    assert plain_text(html).strip() == "2Ld\u2009b=524,288 bytes, 5.24×10^5"


@pytest.mark.parametrize(
    "text",
    [
        "a head dimension of 512",  # the answer in KiB, without its unit
        "512 heads of 128",
        "2 GPUs and 32 layers",
        "about 0.5 MB",  # one figure, and 0.524 MB is not 0.5 exactly
        "524,288 tokens",  # another quantity
        "5.24×10⁵ FLOP",
        "0.5 MiB/s",  # a bandwidth, not a size
        "an H100, a B200 and FP32",
        "exercise 4.5",
        "",
    ],
)
def test_what_is_not_a_leak(text: str) -> None:
    assert found(text) == []


def test_a_number_the_grader_would_accept_is_a_leak_at_any_precision() -> None:
    decode = answer(0.9995, "FLOP/byte")  # lm-from-scratch 4.2, within 0.5% of 1
    assert found("at batch 1 the intensity is about 1 FLOP/byte", decode) == ["1 FLOP/byte"]
    kv = answer(2.147483648, "GB")  # 2 GiB, asked in GB to three figures
    assert found("about 2 GB", kv) == []
    assert found("2.1 GB", kv) == ["2.1 GB"]
    assert found("exactly 2 GiB", kv) == ["2 GiB"]


def test_money_and_rates_are_read_in_their_own_units() -> None:
    bill = answer(57024, "$")
    assert found("The fleet costs $57,024 a month", bill) == ["$57,024"]
    assert found("$57,024 per hour", bill) == []  # a rate, not the bill
    price = answer(1.44, "$/1M tokens")
    assert found("about $1.44/1M tokens", price) == ["$1.44/1M tokens"]
    assert found("about $1.44/1M tokens", answer(1.44, "$")) == []


def test_counts_and_ratios_need_two_real_figures() -> None:
    assert found("75.0% of the time is bubble", answer(0.75, "")) == ["75.0%"]
    assert found("busy 60.0% of the time", answer(0.6, "")) == []  # 0.6 has one real figure
    assert found("about 1.2× the bound", answer(1.155, "", sig_figs=3)) == []
    assert found("a 1.16× speedup", answer(1.155, "", sig_figs=3)) == ["1.16×"]
    assert found("39 H100s", answer(39, "")) == ["39 H100s"]
    assert found("8 GPUs", answer(8, "")) == []
    assert found("a 2.94-token expectation", answer(2.941, "tokens")) == ["2.94"]  # decimals: three figures do


def test_a_given_shown_is_public() -> None:
    utilisation = answer(0.25, "")
    assert found("removing 25.0% of the time", utilisation) == ["25.0%"]
    assert found("removing 25.0% of the time", utilisation, public=(0.25,)) == []
    # A given is a plain number: it makes "512" public, never "512 KiB".
    assert found("512 KiB", public=(512,)) == ["512 KiB"]


# ---- an exercise against its own answers --------------------------------------------------------

KV: dict[str, Any] = {
    "number": "0.1",
    "id": "kv-cache-per-token",
    "title": "KV cache per token",
    "kind": "derive",
    "format": "numeric",
    "givens": {"L": 32, "d": 4096, "b": 2},
    "derived": {"per_token": "2 * L * d * b"},
    "prompt": "L = {{L}}, d = {{d}}, BF16 at {{b}} bytes. Each token's cache, in KiB?",
    "answer": {"value": "per_token", "unit": "bytes", "input_unit": "KiB", "sig_figs": 3},
    "hints": ["Count K and V in every layer."],
    "explanation": "$2Ld\\,b$ = **{{per_token}} bytes**, exactly {{per_token/KiB}} KiB.",
}


def exercise(**changes: Any) -> ExerciseSpec:
    return ExerciseSpec.model_validate({**copy.deepcopy(KV), **changes})


def test_the_explanation_may_state_the_answer_and_nothing_else_may() -> None:
    assert check_exercise(exercise()) == []
    problems = check_exercise(exercise(hints=["That is {{per_token/KiB/1024}} MiB in all."]))
    assert problems == ["hints[0]: states the answer: answer (512 KiB) as '0.5000 MiB', exactly"]
    mistake = {"value": "per_token / 2", "feedback": "Half of {{per_token}} bytes: count K and V."}
    problems = check_exercise(exercise(answer={**KV["answer"], "mistakes": [mistake]}))
    assert problems == ["answer.mistakes[0].feedback: states the answer: answer (512 KiB) as '524,288 bytes', exactly"]


def test_an_answer_equal_to_a_given_is_public() -> None:
    # Transformer-math 1.4: the variance of a dot product of unit-variance vectors is the given d_k.
    spec = exercise(
        givens={"d_k": 128},
        derived={},
        prompt="q and k have $d_k = {{d_k}}$ unit-variance entries. What is the variance of $q \\cdot k$?",
        answer={"value": "d_k", "unit": "", "sig_figs": 3},
        explanation="Each of the $d_k$ products has variance 1.",
    )
    assert exercise_leaks(resolve(spec)) == []


# ---- chapters: the intro, and earlier exercises -----------------------------------------------------


def chapter(intro: str, *exercises: ExerciseSpec) -> ChapterSpec:
    return ChapterSpec(
        number=0, title="KV cache", intro=intro, givens={"L7": 32, "d7": 4096, "b": 2}, exercises=list(exercises)
    )


def test_an_intro_that_states_an_answer_is_caught() -> None:
    leaky = chapter("Each token's cache takes $2Ld\\,b$ = {{2*L7*d7*b}} bytes.", exercise())
    assert check_chapter(leaky) == ["chapter 0 intro: states 0.1's answer (512 KiB) as '524,288 bytes', exactly"]
    assert check_chapter(chapter("Each token adds $2Ld\\,b$ bytes; with $L = {{L7}}$ layers…", exercise())) == []


def test_the_transformer_math_chapter_4_intro_as_the_review_found_it() -> None:
    (kv_chapter,) = load_workbook(DEFAULT_ROOT / "transformer-math", chapter_glob="04-*").chapters
    assert chapter_leaks(kv_chapter) == []
    reviewed = kv_chapter.model_copy(
        update={"intro": kv_chapter.intro + "\n\nEach token's cache takes {{2*L7*d7*b}} bytes."}
    )
    assert chapter_leaks(reviewed) == ["chapter 4 intro: states 4.5's answer (512 KiB) as '524,288 bytes', exactly"]


def test_a_later_exercise_may_state_an_earlier_answer_only_naming_it() -> None:
    later = {
        "number": "0.2",
        "id": "whole-context",
        "title": "A whole context",
        "derived": {"per_token": "2 * L * d * b"},
    }
    states = exercise(
        **later, prompt="L = {{L}}, d = {{d}}, {{b}} bytes: each token takes {{per_token}} bytes. In all?"
    )
    problems = chapter_leaks(chapter("", exercise(), states))
    assert problems == ["0.2 prompt: states 0.1's answer (512 KiB) as '524,288 bytes', exactly"]
    names = exercise(**later, prompt="L = {{L}}, d = {{d}}, {{b}} bytes: each token takes {{per_token}} bytes (0.1).")
    assert chapter_leaks(chapter("", exercise(), names)) == []
    # A choice's options are candidates, not statements: a distractor may be another exercise's number.
    options = [
        {"text": "{{per_token}} bytes", "feedback": "That is one token."},
        {"text": "{{per_token * 4096}} bytes", "correct": True, "feedback": "Right."},
    ]
    choice = exercise(
        **later,
        kind="trace",
        format="choice",
        answer=None,
        options=options,
        prompt="L = {{L}}, d = {{d}}, {{b}} bytes. The cache of 4096 tokens?",
    )
    assert chapter_leaks(chapter("", exercise(), choice)) == []


# ---- the content ----------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", ["transformer-math", "lm-from-scratch", "systems-serving", "scaling-book", "roofline"])
def test_no_intro_prompt_or_hint_states_an_answer(slug: str) -> None:
    """Every chapter intro against every answer of its chapter, every exercise against its own
    answers and those of the exercises before it (checks named by exercise in the message)."""
    workbook = load_workbook(DEFAULT_ROOT / slug, compute_expected=False)  # code's expected values are not prose
    problems: list[str] = []
    for ch in workbook.chapters:
        problems += chapter_leaks(ch)
        problems += [f"{spec.number} {p}" for spec in ch.exercises for p in exercise_leaks(resolve(spec))]
    assert problems == []
    assert sum(len(ch.exercises) for ch in workbook.chapters) > 0
