"""The checks ``check_content`` runs, and the admin runs on save.

Each returns a list of problems (empty when the exercise is sound). Beyond the schema: every
formula evaluates to a finite number in a known unit; every placeholder renders; every given is
shown to the learner; the answer rounded to the figures the prompt asks for is accepted and every
known mistake is rejected; choices have their correct option(s); an order is complete and
consistent; table cells resolve; every exercise has an explanation; buggy lines are exactly the
lines the fix changes; reference solutions pass their tests and starter code fails them.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from apps.exercises import formats, roofline
from apps.exercises.choices import ExerciseKind
from apps.exercises.content.refs import spec_refs
from apps.exercises.content.render import RenderError, markdown_html, placeholders, substitute, unrendered_math
from apps.exercises.content.resolve import ContentError, ResolvedExercise, resolve
from apps.exercises.content.schema import ChapterSpec, CodeSpec, ExerciseSpec
from apps.exercises.content.secrecy import chapter_leaks, exercise_leaks
from apps.exercises.content.slips import figure_problems, grouped_in_shapes, label_problems
from apps.exercises.content.texts import leftovers, slots
from apps.exercises.content.variants import Variant, samples
from apps.exercises.grading.formula import FormulaError, names, scope_of
from apps.exercises.jobs import (
    ReferenceFailed,
    code_cases,
    code_job,
    example_problems,
    limits_for,
    probe_problems,
    reference_job,
    with_reference,
)
from apps.sandbox.runner import Runner, SandboxUnavailable
from apps.sandbox.verdict import Verdict as RunVerdict
from apps.sandbox.verdict import judge

# The kinds whose formats are restricted; each format lists the kinds it suits.
CHECKED_KINDS = frozenset(
    {ExerciseKind.DERIVE, ExerciseKind.TRACE, ExerciseKind.DESIGN, ExerciseKind.BUILD, ExerciseKind.DEBUG}
)


def texts(resolved: ResolvedExercise) -> Iterable[tuple[str, str]]:
    """Every piece of prose in an exercise, rendered, with where it lives (see ``texts.slots``)."""
    for slot in slots(resolved.spec.model_dump(mode="json"), resolved.scope):
        yield slot.where, slot.text


def check_exercise(spec: ExerciseSpec, *, runner: Runner | None = None) -> list[str]:
    """Every problem with one exercise. With a ``runner``, its reference code and starter are run."""
    problems: list[str] = []
    fmt = formats.get(spec.format)
    if spec.kind in CHECKED_KINDS and spec.kind not in fmt.kinds:
        problems.append(f"a {spec.kind} exercise cannot use the {spec.format} format")
    if not spec.explanation.strip():
        # The schema lets a choice leave it out (versions stored before this check still load);
        # new content may not: a reveal shows the explanation beside each option's feedback.
        problems.append("no explanation: every exercise needs one, shown once it is solved or revealed")
    try:
        resolved = resolve(spec)
    except ContentError as exc:
        return [*problems, str(exc)]
    problems += _check_resolved(spec, resolved)
    problems += _check_givens_shown(spec)
    if spec.vary is not None and not problems:
        problems += check_variants(spec)
    if spec.code is not None:
        problems += example_problems(spec.code, values_known=runner is not None)
    if spec.code is not None and runner is not None:
        buggy = fmt.buggy_code or spec.kind == ExerciseKind.DEBUG
        problems += check_code(spec.code, runner=runner, buggy=buggy)
    return problems


def _check_resolved(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    """The checks that depend on the numbers: run on the seed's and on every sampled variant."""
    problems: list[str] = []
    for where, text in texts(resolved):
        problems += [f"{where}: template syntax left unrendered: {bit!r}" for bit in leftovers(text)]
        problems += [
            f"{where}: math not rendered: {m!r} (no spaces just inside the dollars)"
            for m in unrendered_math(markdown_html(text))
        ]
        problems += [f"{where}: thousands separators in a shape or index: {bit!r}" for bit in grouped_in_shapes(text)]
    problems += label_problems(resolved) + figure_problems(resolved)
    problems += exercise_leaks(resolved)
    problems += formats.get(spec.format).check(resolved.spec, resolved)
    if spec.plot is not None:
        problems += _check_plot(resolved.spec, resolved)
    return problems


# Variants sampled per varying exercise; every check that depends on the numbers runs on each.
VARIANT_SAMPLES = 64
# Learners sampled per chapter for what crosses exercises (one stating another's answer, the intro).
CHAPTER_SAMPLES = 16


def check_variants(spec: ExerciseSpec, n: int = VARIANT_SAMPLES) -> list[str]:
    """Every sampled variant is as sound as the seed's numbers; the first failing one is reported
    with its givens, so the author can add a ``require`` that excludes it."""
    answers: set[str] = set()
    for i, variant in enumerate(samples(spec, chapter=0, n=n)):
        if not variant.drawn:
            return [f"vary: no draw of sample {i} met `require` in the tries allowed; widen the ranges"]
        try:
            resolved = resolve(spec, variant)
        except ContentError as exc:
            return [f"variant {_givens(variant)}: {exc}"]
        problems = _check_resolved(spec, resolved)
        refs = spec_refs(spec.model_dump(mode="json"))
        if refs and not problems:  # and as a learner who finished what it refers to reads it
            try:
                problems = _check_resolved(spec, resolve(spec, variant.knowing(refs)))
            except ContentError as exc:
                problems = [str(exc)]
        if problems:
            return [f"variant {_givens(variant)}: {p}" for p in problems]
        answers.add(repr(_answers(resolved)))
    if len(answers) < 2:
        return [f"vary: all {n} sampled variants have the same answer; vary a given the answer depends on"]
    return []


def _givens(variant: Variant) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in variant.values)


def _answers(resolved: ResolvedExercise) -> object:
    """What a learner's answer is checked against, comparable across variants."""
    return (
        resolved.numeric.value if resolved.numeric else None,
        sorted((k, t.value) for k, t in resolved.cells.items()),
        sorted((k, getattr(t, "value", getattr(t, "text", None))) for k, t in resolved.parts.items()),
        [o.correct for o in resolved.spec.options or []],
        [o.text for o in resolved.spec.options or []],
    )


def _check_givens_shown(spec: ExerciseSpec) -> list[str]:
    shown: set[str] = set()
    prose = [spec.prompt] + [o.text for o in spec.options or []] + [s.text for s in spec.steps or []]
    for text in prose:
        for expr in placeholders(text):
            try:
                shown |= names(expr)
            except FormulaError:
                continue  # reported by the render check
    hidden = set(spec.givens) - shown - set(spec.implicit)
    if not formats.get(spec.format).givens_in_prompt:
        hidden = set()  # a table's givens are per row and shown in the grid
    return [
        f"given {name!r} never appears in the prompt (show it, or list it under implicit)" for name in sorted(hidden)
    ]


def _check_plot(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    """The plot draws, with the answers on it, over its whole x range."""
    assert spec.plot is not None
    try:
        figure = roofline.draw(spec.plot, resolved.scope, resolved.plot_answers, {})
    except roofline.PlotError as exc:
        return [str(exc)]
    lo, hi = spec.plot.x.min, spec.plot.x.max
    return [
        f"plot: {p.label} at x = {p.x:.4g} falls outside the x axis"
        for p in figure.points
        if (lo is not None and p.x < lo) or (hi is not None and p.x > hi)
    ]


# Runs of one exercise's solutions at once: the reference, the starter and the wrong ones.
_PARALLEL_RUNS = 2
# The draw of random cases that check_content checks the solutions on (a worker draws per attempt).
CHECK_SEED = 20_261_127


def check_code(code: CodeSpec, *, runner: Runner, buggy: bool) -> list[str]:
    """The reference solution passes its tests; the starter (or buggy snippet) and every wrong
    solution in ``wrong/`` fail them."""
    problems: list[str] = []
    if len(code.cases) < 3:
        problems.append("code exercises need at least three test cases")
    if any(c.expected is None for c in code.cases if not c.probe and c.random is None):
        problems.append("a test case has no expected value")
    problems += probe_problems(code)
    # Random cases on one fixed draw, their expected values from the reference as a worker gets them.
    cases = code_cases(code, seed=CHECK_SEED)
    reference = reference_job(code, cases)
    if reference is not None:
        try:
            cases = with_reference(cases, runner.run(reference, limits_for(code)))
        except SandboxUnavailable as exc:
            return [*problems, f"could not run the code: {exc}"]
        except ReferenceFailed as exc:
            return [*problems, f"random cases: {exc}"]
    sources = [code.solution, code.starter, *(w.source for w in code.wrong)]

    def run(index: int) -> RunVerdict:
        # One CPU each (the slot pins it), as a worker's pool processes are.
        limits = limits_for(code, slot=index % _PARALLEL_RUNS)
        return judge(runner.run(code_job(code, sources[index], cases), limits), cases, code.entry)

    try:
        with ThreadPoolExecutor(max_workers=_PARALLEL_RUNS) as pool:
            ref, start, *wrong = pool.map(run, range(len(sources)))
    except SandboxUnavailable as exc:
        return [*problems, f"could not run the code: {exc}"]
    problems += [
        f"wrong solution {w.name} ({w.misconception}) passes every test: add a case it fails"
        for w, verdict in zip(code.wrong, wrong, strict=True)
        if verdict.passed
    ]
    if not ref.passed:
        failed = [f"{c.call}: {c.message} expected {c.expected}, got {c.got}" for c in ref.cases if not c.passed]
        problems.append(
            f"the reference solution fails its tests ({ref.outcome}): " + "; ".join(failed or [ref.message])[:1000]
        )
    if start.passed:
        what = "buggy snippet" if buggy else "starter code"
        problems.append(f"the {what} passes every test, so the tests cannot tell it from a solution")
    return problems


def check_chapter(chapter: ChapterSpec) -> list[str]:
    try:
        text = substitute(chapter.intro, scope_of(chapter.givens, chapter.derived))
    except (FormulaError, RenderError) as exc:
        return [f"chapter {chapter.number} intro: {exc}"]
    problems = [f"chapter {chapter.number} intro: template syntax left unrendered: {bit!r}" for bit in leftovers(text)]
    problems += [
        f"chapter {chapter.number} intro: thousands separators in a shape: {b!r}" for b in grouped_in_shapes(text)
    ]
    problems += chapter_leaks(chapter)
    if any(e.vary is not None for e in chapter.exercises):
        # Learners' own numbers: a chapter's exercises share them, and its intro is the seed's.
        for i in range(CHAPTER_SAMPLES):
            found = chapter_leaks(chapter, seed=f"check-{i}")
            if found:
                problems += [f"learner numbers check-{i}: {p}" for p in found]
                break
    return problems + [
        f"chapter {chapter.number} intro: math not rendered: {m!r}" for m in unrendered_math(markdown_html(text))
    ]
