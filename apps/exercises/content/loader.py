"""Reading workbooks from ``fixtures/workbooks/<slug>/``.

Layout::

    <slug>/workbook.yaml            slug, title, summary, prerequisites, position, source
    <slug>/chapters/NN-name.yaml    one chapter: number, title, intro, exercises
    <slug>/skills.yaml              optional: the skills checklist and its review protocol
    <slug>/presets.yaml             optional: shared tables (model shapes, hardware) variants draw from
    <slug>/code/<dir>/starter.py    code exercises: what the learner starts from
                     solution.py    the reference solution
                     tests.py       CASES = [...], a literal list (read with ast, never executed)
                     checks.py      optional: the checkers that probe cases name (run in the sandbox)
                     wrong/*.py     plausible wrong solutions, each opening with a comment naming its
                                    misconception: check_content requires every one to fail the tests

Code files are inlined into the exercise spec, and expected values a test leaves out are found
by ``Expected``: taken from an earlier sync of the same code when the database has them, else
computed by running the reference solution in the sandbox (authors' code is untrusted input like
learners'; nothing here runs it in this process). A probe's expected facts are never computed,
they state the requirement and must be written out.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as default
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from apps.exercises.content.schema import ChapterSpec, WorkbookSpec
from apps.sandbox.runner import Job, Limits, Runner, SandboxUnavailable
from apps.sandbox.verdict import decode, plain


class LoadError(ValueError):
    """A content file that cannot be read or does not match the format. Names the file."""


def _yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise LoadError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise LoadError(f"{path}: expected a mapping at the top level")
    return data


def _format_validation(path: Path, exc: ValidationError) -> str:
    lines = [f"{path}:"]
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        lines.append(f"  {where}: {err['msg']}")
    return "\n".join(lines)


def read_cases(path: Path) -> list[dict[str, Any]]:
    """The CASES literal of a tests.py, without executing the file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as exc:
        raise LoadError(f"{path}: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CASES" for t in node.targets):
            try:
                cases = ast.literal_eval(node.value)
            except ValueError as exc:
                raise LoadError(f"{path}: CASES must be a literal list of dicts ({exc})") from None
            if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
                raise LoadError(f"{path}: CASES must be a list of dicts")
            return cases
    raise LoadError(f"{path}: no CASES = [...] assignment")


def _wrong_solution(path: Path) -> dict[str, str]:
    """``wrong/<name>.py``: a plausible wrong solution; its first line, a comment, says which misconception."""
    source = path.read_text(encoding="utf-8")
    first = source.splitlines()[0] if source.strip() else ""
    if not first.startswith("#") or not first.lstrip("# ").strip():
        raise LoadError(f"{path}: a wrong solution starts with a comment naming the misconception it encodes")
    return {"name": path.stem, "misconception": first.lstrip("# ").strip(), "source": source}


class SandboxNeeded(LoadError):
    """Expected values must be computed by running the reference solution, and no sandbox could."""


@dataclass
class Expected:
    """How the expected values that a ``tests.py`` leaves out are found.

    ``known`` maps an exercise id to its code as last synced (``solution``, ``entry``, ``env``,
    ``cases`` with their expected values): a case whose inputs and reference are unchanged keeps
    its value without a run. Anything else is computed by running the reference solution with
    ``runner`` (the sandbox). Without one, or when the sandbox fails, the exercise cannot load:
    ``SandboxNeeded``, or with ``skip_unavailable`` the exercise is left out and named in ``skipped``.
    """

    runner: Runner | None = None
    known: Mapping[str, Mapping[str, Any]] = default(default_factory=dict)
    skip_unavailable: bool = False
    skipped: dict[str, str] = default(default_factory=dict)  # id -> number of each exercise left out
    runs: int = 0  # reference solutions run

    def fill(self, raw: dict[str, Any], code: dict[str, Any], cases: list[dict[str, Any]]) -> None:
        # A random case's expected value is computed per attempt, on the inputs drawn for it.
        missing = [c for c in cases if "expected" not in c and not c.get("probe") and "random" not in c]
        if not missing:
            return
        previous = self.known.get(str(raw.get("id")))
        if previous is not None and all(
            _same(previous.get(k), code.get(k)) for k in ("solution", "entry", "env", "checker")
        ):
            stored = {str(c.get("id")): c for c in previous.get("cases") or []}
            for case in missing:
                old = stored.get(str(case["id"]))
                if old is not None and old.get("expected") is not None and _same(_inputs(old), _inputs(case)):
                    case["expected"] = old["expected"]
            missing = [c for c in missing if "expected" not in c]
            if not missing:
                return
        where = f"exercise {raw.get('number')}"
        if self.runner is None:
            raise SandboxNeeded(
                f"{where}: expected values are computed by running solution.py in the sandbox, and no sandbox was given"
            )
        job = Job(
            str(code.get("entry")),
            [{"args": [], "kwargs": {}, **c} for c in cases if not c.get("probe") and "random" not in c],
            {"submission.py": code["solution"]},
            env={str(k): str(v) for k, v in (code.get("env") or {}).items()},
        )
        try:
            run = self.runner.run(job, Limits(time_s=60.0, cpuset="0"))
        except SandboxUnavailable as exc:
            raise SandboxNeeded(f"{where}: expected values need the sandbox, which is unavailable: {exc}") from None
        self.runs += 1
        items = (run.report or {}).get("results", [])
        results = {r.get("id"): r for r in items if isinstance(r, dict)}
        fatal = next((r.get("fatal") for r in items if isinstance(r, dict) and "fatal" in r), None)
        fatal = fatal or (run.report or {}).get("fatal")
        for case in missing:
            result = results.get(case["id"])
            if not result or not result.get("ok"):
                detail = fatal or (result or {}).get("error") or run.status
                raise LoadError(f"{where}: reference solution failed on {case['id']}: {detail}")
            value = plain(decode(result["value"]))
            if "\\u0000" in json.dumps(value):
                raise LoadError(f"{where}: reference solution returned text with a NUL character on {case['id']}")
            case["expected"] = value


def _inputs(case: Mapping[str, Any]) -> list[Any]:
    return [case.get("args") or [], case.get("kwargs") or {}]


def _same(a: object, b: object) -> bool:
    """Equal as stored JSON (a tuple is a list, an absent field an empty one)."""
    return json.dumps(a or None, sort_keys=True) == json.dumps(b or None, sort_keys=True)


def _inline_code(raw: dict[str, Any], workbook_dir: Path, *, expected: Expected | None) -> None:
    code = raw.get("code")
    if not isinstance(code, dict) or "dir" not in code:
        return
    folder = workbook_dir / "code" / str(code["dir"])
    try:
        code["starter"] = (folder / "starter.py").read_text(encoding="utf-8")
        code["solution"] = (folder / "solution.py").read_text(encoding="utf-8")
    except OSError as exc:
        raise LoadError(f"exercise {raw.get('number')}: {exc}") from None
    if (folder / "checks.py").is_file():
        code["checker"] = (folder / "checks.py").read_text(encoding="utf-8")
    code["wrong"] = [_wrong_solution(path) for path in sorted((folder / "wrong").glob("*.py"))]
    cases = read_cases(folder / "tests.py")
    if expected is not None:
        expected.fill(raw, code, cases)
    code["cases"] = cases


def read_presets(workbook_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``presets.yaml``: the workbook's shared tables (model shapes, hardware), each row a set of
    figures written once: ``{table: {source: ..., rows: {key: {name: ..., field: number}}}}``."""
    path = workbook_dir / "presets.yaml"
    if not path.is_file():
        return {}
    data = _yaml(path)
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for name, table in data.items():
        rows = table.get("rows") if isinstance(table, dict) else None
        if not isinstance(rows, dict) or not rows or not str(table.get("source", "")).strip():
            raise LoadError(f"{path}: table {name!r} needs a `source` and at least one row under `rows`")
        table_rows: dict[str, dict[str, Any]] = {}
        for key, row in rows.items():
            if not isinstance(row, dict):
                raise LoadError(f"{path}: {name}.{key} must map fields to numbers (and `name` to text)")
            table_rows[str(key)] = {str(f): _preset_value(path, f"{name}.{key}.{f}", f, v) for f, v in row.items()}
        tables[str(name)] = table_rows
    return tables


def _preset_value(path: Path, where: str, field: object, value: object) -> int | float | str:
    """A preset row's field: a number, or text for its `name`. YAML reads ``989.4e12`` (no sign in
    the exponent) as text; such a number is taken as the number it spells."""
    if field == "name" and isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise LoadError(f"{path}: {where} must be a number")
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise LoadError(f"{path}: {where} is {value!r}, not a number") from None
    return value


def _inline_presets(raw: dict[str, Any], tables: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Copy the rows an exercise's presets draw from into its spec, and take the givens the seed
    row sets from the table unless the exercise states them."""
    vary = raw.get("vary")
    if not isinstance(vary, dict):
        return
    givens = raw.setdefault("givens", {})
    for use in vary.get("presets") or []:
        if not isinstance(use, dict):
            continue
        table = tables.get(str(use.get("table")))
        if table is None:
            raise LoadError(f"exercise {raw.get('number')}: no preset table {use.get('table')!r} in presets.yaml")
        keys = use.get("pick") or list(table)
        missing = [k for k in [*keys, use.get("seed")] if k not in table]
        if missing:
            raise LoadError(f"exercise {raw.get('number')}: preset table {use['table']!r} has no rows {missing}")
        use["rows"] = {k: table[k] for k in dict.fromkeys([*keys, use["seed"]])}
        for given, field in (use.get("set") or {}).items():
            for key in use["rows"]:
                if field not in table[key]:
                    raise LoadError(f"exercise {raw.get('number')}: preset row {key!r} has no field {field!r}")
            givens.setdefault(given, table[use["seed"]][field])


def _inline_scenarios(raw: dict[str, Any], tables: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Copy each chapter scenario into the exercises that name it: its seed givens and derived
    formulas join theirs, and its draw rules go to ``vary.scenario`` (one draw for them all)."""
    scenarios = raw.get("scenarios") or {}
    if not isinstance(scenarios, dict):
        return
    for name, scenario in scenarios.items():
        if isinstance(scenario, dict) and isinstance(scenario.get("vary"), dict):
            holder = {
                "number": f"scenario {name}",
                "givens": scenario.setdefault("givens", {}),
                "vary": scenario["vary"],
            }
            _inline_presets(holder, tables)
    for ex in raw.get("exercises") or []:
        if not isinstance(ex, dict) or ex.get("scenario") is None:
            continue
        name = ex["scenario"]
        scenario = scenarios.get(name)
        if not isinstance(scenario, dict):
            raise LoadError(f"exercise {ex.get('number')}: no scenario {name!r} in this chapter's `scenarios`")
        givens, derived = scenario.get("givens") or {}, scenario.get("derived") or {}
        own = {**(ex.get("givens") or {}), **(ex.get("derived") or {})}
        clash = sorted(set(own) & (set(givens) | set(derived)))
        if clash:
            raise LoadError(
                f"exercise {ex.get('number')}: {clash} belong to scenario {name!r}; the exercise must not define them again"
            )
        ex["givens"] = {**givens, **(ex.get("givens") or {})}
        ex["derived"] = {**derived, **(ex.get("derived") or {})}
        sc_vary = scenario.get("vary") or {}
        vary = ex.get("vary")
        if not isinstance(vary, dict):
            vary = {}
        vary["scenario"] = {
            "name": name,
            "members": [
                str(e.get("number"))
                for e in raw.get("exercises") or []
                if isinstance(e, dict) and e.get("scenario") == name
            ],
            "seed": dict(givens),
            "derived": dict(derived),
            "givens": sc_vary.get("givens") or {},
            "presets": sc_vary.get("presets") or [],
            "require": sc_vary.get("require") or [],
        }
        if vary["scenario"]["givens"] or vary["scenario"]["presets"] or vary.get("givens") or vary.get("presets"):
            ex["vary"] = vary


def load_workbook(
    workbook_dir: Path, *, expected: Expected | None = None, compute_expected: bool = True, chapter_glob: str = "*"
) -> WorkbookSpec:
    """Read and validate one workbook folder. Raises LoadError with every problem found.

    Expected values a ``tests.py`` leaves out are found by ``expected`` (without one, only code
    exercises that state all theirs load); ``compute_expected=False`` leaves them out instead.
    ``chapter_glob`` restricts which chapter files are read (``"03-*"``), for authors at work.
    """
    if compute_expected and expected is None:
        expected = Expected()
    elif not compute_expected:
        expected = None
    meta_path = workbook_dir / "workbook.yaml"
    meta = _yaml(meta_path)
    chapters: list[ChapterSpec] = []
    problems: list[str] = []
    presets = read_presets(workbook_dir)
    for path in sorted((workbook_dir / "chapters").glob(f"{chapter_glob}.yaml")):
        raw = _yaml(path)
        try:
            _inline_scenarios(raw, presets)
            kept = []
            for ex in raw.get("exercises") or []:
                if isinstance(ex, dict):
                    try:
                        _inline_code(ex, workbook_dir, expected=expected)
                    except SandboxNeeded:
                        if expected is None or not expected.skip_unavailable:
                            raise
                        expected.skipped[str(ex.get("id"))] = str(ex.get("number"))
                        continue
                    _inline_presets(ex, presets)
                kept.append(ex)
            if isinstance(raw.get("exercises"), list):
                raw["exercises"] = kept
            chapters.append(ChapterSpec.model_validate(raw))
        except ValidationError as exc:
            problems.append(_format_validation(path, exc))
        except LoadError as exc:
            problems.append(f"{path}: {exc}")
    if problems:
        raise LoadError("\n".join(problems))
    skills_path = workbook_dir / "skills.yaml"
    skills = _yaml(skills_path) if skills_path.is_file() and chapter_glob == "*" else None
    try:
        spec = WorkbookSpec.model_validate({**meta, "chapters": chapters, "skills": skills})
    except ValidationError as exc:
        raise LoadError(_format_validation(meta_path, exc)) from None
    numbers = [e.number for c in spec.chapters for e in c.exercises]
    dupes = sorted({n for n in numbers if numbers.count(n) > 1})
    if dupes:
        raise LoadError(f"{workbook_dir}: exercise numbers used twice: {dupes}")
    if skills is not None and spec.skill_problems():
        raise LoadError("\n".join(f"{skills_path}: {p}" for p in spec.skill_problems()))
    if workbook_dir.name != spec.slug:
        raise LoadError(f"{meta_path}: slug {spec.slug!r} does not match its folder {workbook_dir.name!r}")
    return spec


def workbook_dirs(root: Path, slug: str | None = None) -> Iterator[Path]:
    for path in sorted(root.iterdir()):
        if (path / "workbook.yaml").is_file() and (slug is None or path.name == slug):
            yield path


class SlugClash(LoadError):
    """Two content roots hold a workbook of the same slug."""


def workbook_folders(slug: str | None = None, roots: Sequence[Path] | None = None) -> list[Path]:
    """The workbook folders of every content root (``settings.CONTENT_DIRS`` unless ``roots``), in
    root order; with ``slug``, that one workbook's (or none). A slug in two roots is an error naming both."""
    if roots is None:
        from django.conf import settings

        roots = settings.CONTENT_DIRS
    found: dict[str, Path] = {}
    for root in roots:
        if not root.is_dir():
            raise LoadError(f"content root {root} is not a directory (CONTENT_DIRS)")
        for folder in workbook_dirs(root):
            if folder.name in found:
                raise SlugClash(
                    f"workbook slug {folder.name!r} is in two content roots: {found[folder.name] / 'workbook.yaml'} "
                    f"and {folder / 'workbook.yaml'}; rename one (its folder and its slug)"
                )
            found[folder.name] = folder
    return [f for name, f in found.items() if slug is None or name == slug]
