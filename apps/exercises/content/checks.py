"""The checks ``check_content`` runs, and the admin runs on save.

Each returns a list of problems (empty when the exercise is sound). Beyond the schema: every
formula evaluates to a finite number in a known unit; every placeholder renders; every given is
shown to the learner; the answer rounded to the figures the prompt asks for is accepted and every
known mistake is rejected; choices have their correct option(s); an order is complete and
consistent; table cells resolve; buggy lines are exactly the lines the fix changes; reference
solutions pass their tests and starter code fails them.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from apps.exercises import roofline
from apps.exercises.choices import AnswerFormat, ExerciseKind
from apps.exercises.content.render import RenderError, markdown_html, placeholders, substitute, unrendered_math
from apps.exercises.content.resolve import ContentError, ResolvedExercise, resolve
from apps.exercises.content.schema import ChapterSpec, CodeSpec, ExerciseSpec
from apps.exercises.content.secrecy import chapter_leaks, exercise_leaks
from apps.exercises.content.tells import choice_tell
from apps.exercises.content.texts import leftovers, slots
from apps.exercises.grading import numeric, symbolic
from apps.exercises.grading.base import InvalidAnswer
from apps.exercises.grading.formula import FormulaError, names, scope_of
from apps.exercises.grading.structured import order_constraints
from apps.sandbox.jobs import code_cases, code_job, limits_for, probe_problems
from apps.sandbox.runner import Runner, SandboxUnavailable
from apps.sandbox.verdict import Verdict as RunVerdict
from apps.sandbox.verdict import judge

KIND_FORMATS: dict[str, set[str]] = {
    ExerciseKind.DERIVE: {AnswerFormat.NUMERIC, AnswerFormat.TABLE, AnswerFormat.PARTS},
    ExerciseKind.TRACE: {AnswerFormat.CHOICE, AnswerFormat.PARTS},
    ExerciseKind.DESIGN: {AnswerFormat.ORDER, AnswerFormat.CHOICE, AnswerFormat.NUMERIC, AnswerFormat.PARTS},
    ExerciseKind.BUILD: {AnswerFormat.CODE},
    ExerciseKind.DEBUG: {AnswerFormat.LINES, AnswerFormat.CODE},
}


def texts(resolved: ResolvedExercise) -> Iterable[tuple[str, str]]:
    """Every piece of prose in an exercise, rendered, with where it lives (see ``texts.slots``)."""
    for slot in slots(resolved.spec.model_dump(mode="json"), resolved.scope):
        yield slot.where, slot.text


def check_exercise(spec: ExerciseSpec, *, runner: Runner | None = None) -> list[str]:
    """Every problem with one exercise. With a ``runner``, its reference code and starter are run."""
    problems: list[str] = []
    allowed = KIND_FORMATS.get(spec.kind)
    if allowed is not None and spec.format not in allowed:
        problems.append(f"a {spec.kind} exercise cannot use the {spec.format} format")
    try:
        resolved = resolve(spec)
    except ContentError as exc:
        return [*problems, str(exc)]
    for where, text in texts(resolved):
        problems += [f"{where}: template syntax left unrendered: {bit!r}" for bit in leftovers(text)]
        problems += [
            f"{where}: math not rendered: {m!r} (no spaces just inside the dollars)"
            for m in unrendered_math(markdown_html(text))
        ]
    problems += _check_givens_shown(spec)
    problems += exercise_leaks(resolved)
    checkers: dict[str, Callable[[ExerciseSpec, ResolvedExercise], list[str]]] = {
        AnswerFormat.NUMERIC: _check_numeric,
        AnswerFormat.ORDER: _check_order,
        AnswerFormat.TABLE: _check_table,
        AnswerFormat.CHOICE: _check_choice,
        AnswerFormat.PARTS: _check_parts,
    }
    if spec.format in checkers:
        problems += checkers[spec.format](spec, resolved)
    if spec.plot is not None:
        problems += _check_plot(spec, resolved)
    if spec.format == AnswerFormat.LINES:
        problems += _check_lines(spec)
    if spec.code is not None and runner is not None:
        buggy = spec.format == AnswerFormat.LINES or spec.kind == ExerciseKind.DEBUG
        problems += check_code(spec.code, runner=runner, buggy=buggy)
    return problems


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
    if spec.format == AnswerFormat.TABLE:
        hidden = set()  # table givens are per row and shown in the grid
    return [
        f"given {name!r} never appears in the prompt (show it, or list it under implicit)" for name in sorted(hidden)
    ]


def _check_numeric(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    assert spec.answer is not None and resolved.numeric is not None
    return _check_target(resolved.numeric, "answer")


def _check_target(target: numeric.NumericTarget, where: str) -> list[str]:
    problems: list[str] = []
    if not math.isfinite(target.value):
        return [f"{where} is not finite"]
    sig_figs = target.sig_figs
    in_input = target.value / target.input_unit.scale
    rounded = float(f"{in_input:.{sig_figs}g}")
    typed = f"{rounded:.{sig_figs}g} {target.input_unit.label}"
    try:
        result = numeric.grade(typed, target)
        if not result.correct:
            problems.append(
                f"{where}: the answer rounded to {sig_figs} figures ({typed}) is rejected; "
                f"raise the tolerance ({target.tolerance}) or ask for more figures"
            )
    except InvalidAnswer as exc:
        problems.append(f"{where}: the answer written as {typed!r} does not parse: {exc.message}")
    threshold = numeric.base_threshold(target.input_unit)
    if threshold is not None and abs(in_input) >= threshold:
        problems.append(
            f"{where}: the answer is {in_input:.4g} {target.input_unit.label}, but a bare number of "
            f"{threshold:g} or more in this field is read in {target.dim.label()}; choose a larger input_unit"
        )
    for i, mistake in enumerate(target.mistakes):
        if numeric.close(mistake.value, target.value, target.tolerance):
            problems.append(f"{where}.mistakes[{i}] is within the tolerance of the answer, so it can never be reported")
    for i, alt in enumerate(target.alternates):
        for j, mistake in enumerate(target.mistakes):
            if numeric.close(mistake.value, alt.value, alt.tolerance):
                problems.append(f"{where}.mistakes[{j}] coincides with alternates[{i}]")
    return problems


def _check_choice(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    options = spec.options or []
    texts_ = [o.text.strip() for o in options]
    problems = ["two options have the same text"] if len(set(texts_)) != len(texts_) else []
    tell = choice_tell(resolved.spec)
    return problems + (tell.problems if tell else [])


def _check_order(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    steps = spec.steps or []
    listed = [s.id for s in steps]
    position = {s: i for i, s in enumerate(listed)}
    problems = []
    for before, after in order_constraints(steps, spec.constraints):
        if position[before] > position[after]:
            problems.append(f"the listed order breaks its own constraint ({before} before {after})")
    return problems


def _check_table(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    problems: list[str] = []
    columns = {c.key: c for c in spec.columns or []}
    for row in spec.rows or []:
        for col in columns.values():
            if col.value is None and col.key not in row.values:
                problems.append(f"row {row.key} has no value for column {col.key}")
        for key in row.values:
            if key not in columns and not isinstance(row.values[key], (int, float)):
                problems.append(f"row {row.key}: {key} is not a column")
    for cell_id, target in resolved.cells.items():
        problems += _check_target(target, f"cell {cell_id}")
    return problems


def _check_parts(spec: ExerciseSpec, resolved: ResolvedExercise) -> list[str]:
    problems: list[str] = []
    for key, target in resolved.parts.items():
        where = f"part {key}"
        if isinstance(target, numeric.NumericTarget):
            problems += _check_target(target, where)
            continue
        names = list(target.symbols)
        try:
            if not symbolic.grade(target.text, target).correct:
                problems.append(f"{where}: the expected expression is not graded correct")
        except InvalidAnswer as exc:
            problems.append(f"{where}: the expected expression does not parse for learners: {exc.message}")
        for i, mistake in enumerate(target.mistakes):
            if symbolic.equivalent(mistake.expr, target.expr, names):
                problems.append(f"{where}.mistakes[{i}] is equivalent to the answer, so it can never be reported")
            elif target.accept_approximate and symbolic.equal_in_limit(mistake.expr, target.expr, names, target.small):
                problems.append(f"{where}.mistakes[{i}] equals the answer under the accepted approximation")
    return problems


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


def changed_lines(before: str, after: str) -> set[int]:
    """1-based lines of ``before`` that ``after`` replaces or deletes."""
    out: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            out.update(range(i1 + 1, i2 + 1))
    return out


def _check_lines(spec: ExerciseSpec) -> list[str]:
    assert spec.code is not None and spec.buggy_lines is not None
    n = len(spec.code.starter.splitlines())
    problems = [f"buggy line {b} is outside the snippet (1–{n})" for b in spec.buggy_lines if not 1 <= b <= n]
    changed = changed_lines(spec.code.starter, spec.code.solution)
    if changed != set(spec.buggy_lines):
        problems.append(
            f"buggy_lines {sorted(spec.buggy_lines)} differ from the lines the fix changes {sorted(changed)}"
        )
    return problems


# Runs of one exercise's solutions at once: the reference, the starter and the wrong ones.
_PARALLEL_RUNS = 2


def check_code(code: CodeSpec, *, runner: Runner, buggy: bool) -> list[str]:
    """The reference solution passes its tests; the starter (or buggy snippet) and every wrong
    solution in ``wrong/`` fail them."""
    problems: list[str] = []
    if len(code.cases) < 3:
        problems.append("code exercises need at least three test cases")
    if any(c.expected is None for c in code.cases if not c.probe):
        problems.append("a test case has no expected value")
    problems += probe_problems(code)
    cases = code_cases(code)
    sources = [code.solution, code.starter, *(w.source for w in code.wrong)]

    def run(index: int) -> RunVerdict:
        # One CPU each (the slot pins it), as a worker's pool processes are.
        limits = limits_for(code, slot=index % _PARALLEL_RUNS)
        return judge(runner.run(code_job(code, sources[index]), limits), cases, code.entry)

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
    problems += chapter_leaks(chapter)
    return problems + [
        f"chapter {chapter.number} intro: math not rendered: {m!r}" for m in unrendered_math(markdown_html(text))
    ]
