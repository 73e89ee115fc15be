"""A learner's source code, checked before anything runs it: what a submission and a precheck refuse.

Parsing is not running: ``ast.parse`` has its own nesting limits and executes nothing. Code refused
here is explained (a 400 with a stable code) and costs nothing: no attempt, no sandbox run.
"""

from __future__ import annotations

import ast
from typing import Any

from apps.core.exceptions import ApplicationError

MAX_SOURCE_BYTES = 64_000


class UngradableCode(ApplicationError):
    """Code we refuse before running it (empty, too long, not Python): explained, costs nothing."""

    status_code = 400


def source_validate(payload: dict[str, Any]) -> str:
    source = payload.get("code")
    if not isinstance(source, str) or not source.strip():
        raise UngradableCode("Submit your code as `code`: the whole file, as text.", code="bad_payload")
    if "\x00" in source:
        raise UngradableCode("The code contains a NUL character.", code="bad_payload")
    if len(source.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
        raise UngradableCode(f"The code is longer than {MAX_SOURCE_BYTES // 1000} kB.", code="too_long")
    try:
        ast.parse(source, filename="submission.py")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        raise UngradableCode(
            f"Python could not parse your code ({where}): {exc.msg}. Nothing was recorded.",
            code="syntax_error",
            details={"line": exc.lineno, "column": exc.offset, "text": (exc.text or "").rstrip("\n")[:500]},
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise UngradableCode(f"Python could not parse your code: {exc}", code="syntax_error") from None
    return source
