"""References to another exercise's answer: ``{% ref <id> %}known{% else %}pending{% end %}``.

An exercise that builds on an earlier one's answer shows that learner's number only once the
earlier exercise is solved or revealed (the first branch); until then, the ``else`` branch (which
says which exercise to do first). The choice is made per learner before the text is rendered, so
nothing downstream (templates, checks, caches) sees the branch not taken. Nothing here reads the
database: the caller says which referenced exercises the learner has finished.
"""

from __future__ import annotations

import re
from collections.abc import Collection

REF = re.compile(
    r"\{%\s*ref\s+(?P<id>[a-z0-9][a-z0-9-]*)\s*%\}(?P<known>.*?)"
    r"(?:\{%\s*else\s*%\}(?P<pending>.*?))?\{%\s*end\s*%\}",
    re.S,
)
# Any block tag: what is left after choosing is malformed (check_content reports it).
TAG = re.compile(r"\{%.*?%\}", re.S)


def refs_in(text: str) -> list[str]:
    """The exercise ids ``text`` refers to, in order of first mention."""
    return list(dict.fromkeys(m.group("id") for m in REF.finditer(text)))


def choose(text: str, known: Collection[str]) -> str:
    """``text`` with each reference replaced by its branch for a learner who finished ``known``."""
    if "{%" not in text:
        return text
    return REF.sub(lambda m: m.group("known") if m.group("id") in known else (m.group("pending") or ""), text)


def both_branches(text: str) -> str:
    """``text`` with each reference replaced by both its branches: what some learner reads."""
    return REF.sub(lambda m: f"{m.group('known')} {m.group('pending') or ''}", text)


def fill_refs(data: object, known: Collection[str]) -> object:
    """A copy of a spec's JSON with every reference in every string chosen for ``known``."""
    if isinstance(data, dict):
        return {k: fill_refs(v, known) for k, v in data.items()}
    if isinstance(data, list):
        return [fill_refs(v, known) for v in data]
    if isinstance(data, str):
        return choose(data, known)
    return data


def spec_refs(data: object) -> list[str]:
    """Every exercise id a spec's JSON (all its strings) refers to."""
    found: dict[str, None] = {}

    def visit(x: object) -> None:
        if isinstance(x, dict):
            for v in x.values():
                visit(v)
        elif isinstance(x, list):
            for v in x:
                visit(v)
        elif isinstance(x, str) and "{%" in x:
            found.update(dict.fromkeys(refs_in(x)))

    visit(data)
    return list(found)


def leftover_tags(text: str) -> list[str]:
    """Block tags a chosen text still holds (a ``{% ref %}`` without its ``{% end %}``, a typo)."""
    return TAG.findall(choose(text, ()))
