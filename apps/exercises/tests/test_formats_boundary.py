"""Only ``apps/exercises/formats/`` knows the answer formats apart.

Everything else asks the registry (``formats.get(exercise.format)``) and calls the format. This
test reads every module under ``apps/`` (but tests and the formats package) and every template,
and fails on code that branches on a format: a comparison with a format's name or an
``AnswerFormat`` member, a ``match`` on one, a mapping keyed by formats. ``AnswerFormat.choices``
and ``.values`` (the model field, serializers' enums) are fine: they list, not branch.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from apps.exercises import formats
from apps.exercises.choices import AnswerFormat

ROOT = Path(__file__).resolve().parents[3]
APPS = ROOT / "apps"
TEMPLATES = ROOT / "templates"
FORMATS_PACKAGE = APPS / "exercises" / "formats"
NAMES = frozenset(AnswerFormat.values) | {f.name for f in formats.ALL}
# Listing every format is not branching on one.
ENUM_LISTS = frozenset({"choices", "values", "labels", "names"})
FORMATISH = frozenset({"format", "fmt", "answer_format"})


def _is_member(node: ast.AST) -> bool:
    """``AnswerFormat.NUMERIC`` (or ``AnswerFormat.NUMERIC.value``)."""
    if isinstance(node, ast.Attribute) and node.attr == "value":
        node = node.value
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "AnswerFormat"
        and node.attr not in ENUM_LISTS
    )


def _is_name(node: ast.AST) -> bool:
    """A format's name as a literal, or a member."""
    return (isinstance(node, ast.Constant) and node.value in NAMES) or _is_member(node)


def _names_in(node: ast.AST) -> bool:
    """A format name, or a tuple/list/set literal holding one (``x in ("table", "parts")``)."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_name(e) for e in node.elts)
    return _is_name(node)


def _is_formatish(node: ast.AST) -> bool:
    """An expression that holds a format: ``fmt``, ``spec.format``, ``fmt.name``, ``formats.get(x).name``."""
    if isinstance(node, ast.Name):
        return node.id in FORMATISH
    if isinstance(node, ast.Attribute):
        if node.attr in FORMATISH:
            return True
        if node.attr == "name":
            inner = node.value
            if isinstance(inner, ast.Name):
                return inner.id in FORMATISH
            return (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and isinstance(inner.func.value, ast.Name)
                and inner.func.value.id == "formats"
            )
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        # request.GET.get("format") and the like: a format only if it names one
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value in FORMATISH
    return False


def branches_on_format(source: str, filename: str = "<source>") -> list[str]:
    """Where ``source`` compares, matches or keys by an answer format: "line: what"."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Attribute) and _is_member(node):
            found.append(f"{node.lineno}: AnswerFormat member {ast.unparse(node)}")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_formatish(o) for o in operands) and any(_names_in(o) for o in operands):
                found.append(f"{node.lineno}: compares a format: {ast.unparse(node)}")
        elif isinstance(node, ast.Match) and _is_formatish(node.subject):
            names = [p for case in node.cases for p in ast.walk(case.pattern) if isinstance(p, ast.MatchValue)]
            if any(_is_name(p.value) for p in names):
                found.append(f"{node.lineno}: matches on a format: {ast.unparse(node.subject)}")
        elif isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and k.value in NAMES}
            # A mapping with an entry per format; a widget dict may well have one key named "lines".
            if len(keys) >= 3:
                found.append(f"{node.lineno}: a mapping keyed by formats: {sorted(keys)}")
    return found


_TEMPLATE_TAG = re.compile(r"{%\s*(?:if|elif)\b(.*?)%}", re.DOTALL)
_TEMPLATE_NAME = "|".join(sorted(NAMES))
_TEMPLATE_COMPARE = re.compile(
    rf"""(?:[\w.]*\b(?:{"|".join(FORMATISH)})\s*(?:==|!=|\bin\b|\bnot in\b)\s*["'](?:{_TEMPLATE_NAME})["'])"""
    rf"""|(?:["'](?:{_TEMPLATE_NAME})["']\s*(?:==|!=)\s*[\w.]*\b(?:{"|".join(FORMATISH)})\b)"""
)


def template_branches(text: str) -> list[str]:
    return [m.group(0).strip() for m in _TEMPLATE_TAG.finditer(text) if _TEMPLATE_COMPARE.search(m.group(1))]


def _modules() -> list[Path]:
    return sorted(
        p for p in APPS.rglob("*.py") if "tests" not in p.relative_to(APPS).parts and FORMATS_PACKAGE not in p.parents
    )


def test_no_module_outside_formats_branches_on_a_format() -> None:
    offences = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in _modules()
        for where in branches_on_format(path.read_text(encoding="utf-8"), str(path))
    ]
    assert not offences, "branch on formats only in apps/exercises/formats/:\n" + "\n".join(offences)


def test_no_template_branches_on_a_format() -> None:
    offences = [
        f"{path.relative_to(ROOT)}: {tag}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for tag in template_branches(path.read_text(encoding="utf-8"))
    ]
    assert not offences, "templates get flags and labels from the format instead:\n" + "\n".join(offences)


def test_the_scan_covers_the_code() -> None:
    modules = {p.relative_to(APPS).as_posix() for p in _modules()}
    assert {"exercises/presentation.py", "exercises/content/schema.py", "progress/selectors/cohorts.py"} <= modules
    assert not any(m.startswith("exercises/formats/") or "/tests/" in m for m in modules)


def test_the_registry_has_every_format_once() -> None:
    assert [f.name for f in formats.ALL] == list(AnswerFormat.values)
    for name in AnswerFormat.values:
        assert formats.get(name).name == name
        assert (TEMPLATES / formats.get(name).template).is_file()


@pytest.mark.parametrize(
    "source",
    [
        "if spec.format == AnswerFormat.NUMERIC: pass",
        "x = spec.format != 'choice'",
        "ok = ex.format in ('table', 'parts')",
        "ok = fmt == 'code'",
        "ok = 'code' == exercise.format",
        "ok = formats.get(f).name == 'lines'",
        "m = {AnswerFormat.NUMERIC: 1}",
        "m = {'numeric': 1, 'choice': 2, 'order': 3}",
        "allowed = {AnswerFormat.TABLE}",
        "match spec.format:\n    case 'numeric':\n        pass",
    ],
)
def test_the_scan_catches_branches(source: str) -> None:
    assert branches_on_format(source)


@pytest.mark.parametrize(
    "source",
    [
        "text = '{} {}'.format(a, b)",
        "s = f'{value:.{sig}g}'",
        "field = models.CharField(choices=AnswerFormat.choices)",
        "q = Q(format__in=AnswerFormat.values)",
        "if part == 'code': pass",
        "if 'code' in payload: pass",
        "if kind == 'table': pass",
        "if request.GET.get('format') == 'csv': pass",
        "w = {'language': 'python', 'lines': [], 'fix': None}",
        "fmt = formats.get(spec.format)",
    ],
)
def test_the_scan_lets_the_rest_be(source: str) -> None:
    assert not branches_on_format(source)


def test_the_template_scan() -> None:
    assert template_branches('{% if data.format == "code" %}Run{% endif %}')
    assert template_branches("{% elif fmt != 'numeric' %}")
    assert template_branches('{% if "table" == data.format %}')
    assert not template_branches('{% if result.status == "queued" %}{{ x|floatformat:"-1" }}{% endif %}')
    assert not template_branches('{% if request.GET.format == "csv" %}')
