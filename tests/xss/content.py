"""Author and learner input for the corpus: a workbook whose every prose field, title, option,
step, column, part label, skill, test id and starter line holds payloads, and learner code that
prints, returns and raises them."""

from __future__ import annotations

from typing import Any

from tests.xss.payloads import BY_ID, CONTENT, STORABLE, Payload, chunks, prose

SLUG = "xss-corpus"
NUMERIC, CHOICE, ORDER, TABLE, PARTS, INTEGER, BUILD, DEBUG = ("1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8")
ENTRY = "echo"


def line(where: str, payloads: tuple[Payload, ...], cap: int = 10_000) -> str:
    """Payloads on one line (for one-line fields), as many as fit in ``cap`` characters."""
    out: list[str] = []
    for p in payloads:
        text = p.render(where).replace("\n", " ")
        if len(" ".join([*out, text])) > cap:
            break
        out.append(text)
    return " ".join(out)


def title(where: str) -> str:
    """A title: the attribute and element breakouts that a title's contexts invite, under 200 characters."""
    return line(where, tuple(BY_ID[i] for i in ("b03", "h07", "h09", "t01")), cap=200)


def _hints(where: str) -> list[str]:
    return [prose(f"{where}{i}", group) for i, group in enumerate(chunks(CONTENT, 2))]


def _code(where: str) -> dict[str, Any]:
    cases = [
        {"id": line(f"{where}-id", group, cap=200), "args": [line(f"{where}-arg", group, cap=200)], "expected": 1}
        for group in chunks(STORABLE, 6)
    ]
    # The first is an example: its call (payloads as arguments) is shown under the prompt.
    cases[0]["example"] = True
    starter = "def echo(x):\n" + "".join(
        f"    # {p.render(where + '-starter')}\n" for p in STORABLE if "\n" not in p.template
    )
    return {
        "entry": ENTRY,
        "dir": f"{where}-dir",
        "starter": starter + "    return x\n",
        "solution": "def echo(x):\n    return 1\n",
        "cases": cases,
    }


def _base(number: str, key: str, kind: str, fmt: str) -> dict[str, Any]:
    return {
        "number": number,
        "id": key,
        "title": title(f"title{number.replace('.', '')}"),
        "kind": kind,
        "format": fmt,
        "prompt": prose(f"prompt{number.replace('.', '')}"),
        "explanation": prose(f"explanation{number.replace('.', '')}"),
        "hints": _hints(f"hint{number.replace('.', '')}-"),
        "givens": {"a": 6, "b": 7},
        "derived": {"answer": "a * b"},
    }


def workbook_spec() -> dict[str, Any]:
    numeric = _base(NUMERIC, "numeric", "derive", "numeric") | {
        "answer": {
            "value": "answer",
            "unit": "params",
            "mistakes": [{"value": "answer * 2", "feedback": prose("mistake")}],
            "alternates": [{"value": "answer * 3", "feedback": prose("alternate")}],
        }
    }
    options = [
        {"text": prose(f"option{i}", group), "correct": i == 0, "feedback": prose(f"option{i}-feedback", group)}
        for i, group in enumerate(chunks(CONTENT, 4))
    ]
    choice = _base(CHOICE, "choice", "choice", "choice") | {"options": options}
    steps = [{"id": f"s{i}", "text": prose(f"step{i}", group)} for i, group in enumerate(chunks(CONTENT, 4))]
    order = _base(ORDER, "order", "design", "order") | {"steps": steps}
    groups = chunks(CONTENT, 4)
    table = _base(TABLE, "table", "table", "table") | {
        "columns": [
            {"key": "name", "label": line("column-name", groups[0], cap=200)},
            {"key": "n", "label": line("column-n", groups[1], cap=200)},
            {"key": "out", "label": line("column-out", groups[2], cap=200), "value": "n * 2", "unit": "params"},
        ],
        "rows": [
            {"key": f"r{i}", "values": {"name": line(f"row{i}", group), "n": i + 1}} for i, group in enumerate(groups)
        ],
    }
    parts = _base(PARTS, "parts", "derive", "parts") | {
        "parts": [
            {"key": "n", "label": line("part-n", groups[0]), "answer": {"value": "answer", "unit": "params"}},
            {
                "key": "e",
                "label": line("part-e", groups[1]),
                "expression": {
                    "value": "x * y",
                    "symbols": {"x": line("symbol-x", groups[2]), "y": line("symbol-y", groups[3])},
                    "mistakes": [{"value": "x + y", "feedback": prose("expression-mistake")}],
                },
            },
        ]
    }
    integer = _base(INTEGER, "integer", "derive", "integer") | {"answer": {"value": "answer", "unit": "params"}}
    build = _base(BUILD, "build", "build", "code") | {"code": _code("build")}
    debug = _base(DEBUG, "debug", "debug", "lines") | {"code": _code("debug"), "buggy_lines": [2]}
    chapter = {
        "number": 1,
        "title": title("chapter"),
        "intro": prose("intro"),
        "exercises": [numeric, choice, order, table, parts, integer, build, debug],
    }
    return {
        "slug": SLUG,
        "title": title("workbook"),
        "summary": prose("summary"),
        "prerequisites": prose("prerequisites"),
        "position": 95,
        "chapters": [chapter],
        "skills": {
            "protocol": prose("protocol"),
            "skills": [
                {"key": f"k{i}", "text": line(f"skill{i}", group, cap=300), "chapter": 1, "exercises": [NUMERIC]}
                for i, group in enumerate(chunks(CONTENT, 8))
            ],
        },
    }


def _text(where: str, payloads: tuple[Payload, ...]) -> str:
    return "\n\n".join(p.render(where) for p in payloads)  # a paragraph each, as in prose()


def learner_code() -> dict[str, str]:
    """Learner code for the Build: what each submission carries -> its source."""
    got = line("return", STORABLE, cap=290)
    raised_in_call = line("case-error", STORABLE, cap=1900)
    return {
        "prints": (
            "import sys\n"
            f"print({_text('stdout', STORABLE)!r})\n"
            f"print({_text('stderr', STORABLE)!r}, file=sys.stderr)\n"
            f"def echo(x):\n    return {got!r}\n"
        ),
        "raises": f"raise ValueError({_text('exception', STORABLE)!r})\n\ndef echo(x):\n    return 1\n",
        "raises-in-call": f"def echo(x):\n    raise ValueError({raised_in_call!r})\n",
    }


ADMIN = "1.9"  # the exercise an author adds through the admin's YAML form (test_admin_form.py)


#: What the admin's form saves: its content checks (unlike ``sync_content``) refuse Django
#: template syntax left in the text (``{%``), so that payload is typed once, into a refused save.
ADMIN_SAVES: tuple[Payload, ...] = tuple(p for p in CONTENT if "{%" not in p.template)


def admin_exercise(payloads: tuple[Payload, ...] = ADMIN_SAVES) -> dict[str, Any]:
    """A choice exercise as an author types it into the admin: payloads in the prompt, the
    explanation, the hints, and each option's text and feedback."""
    options = [
        {
            "text": prose(f"admin-option{i}", group),
            "correct": i == 0,
            "feedback": prose(f"admin-feedback{i}", group),
        }
        for i, group in enumerate(chunks(payloads, 4))
    ]
    base = {k: v for k, v in _base(ADMIN, "admin-choice", "choice", "choice").items() if k not in ("givens", "derived")}
    return base | {
        "prompt": prose("admin-prompt", payloads),
        "explanation": prose("admin-explanation", payloads),
        "hints": [prose(f"admin-hint{i}", group) for i, group in enumerate(chunks(payloads, 2))],
        "options": options,
    }
