"""The API's JSON parser: refuses bodies nested deeper than MAX_JSON_DEPTH before parsing them.

Python's json module recurses once per level of nesting, so a 2 KB body of 1,000 ``[`` raises
RecursionError (a 500) inside ``json.loads``. No request of ours nests more than a few levels,
so the depth is measured first, without recursing: one regular-expression pass that skips whole
strings (brackets inside strings do not count) and counts ``[``/``{`` against ``]``/``}``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 32

# A whole JSON string (possessive: no backtracking on long or hostile input), or one bracket.
_STRUCTURE = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[{]|[\]}]', re.DOTALL)


def json_depth_exceeds(data: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``data`` opens more than ``limit`` arrays/objects inside one another."""
    depth = 0
    for match in _STRUCTURE.finditer(data):
        char = match.group()[:1]
        if char in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif char in (b"]", b"}"):
            depth -= 1
    return False


class DepthLimitedJSONParser(JSONParser):
    """DRF's JSONParser behind a nesting limit: too deep is a 400 ``parse_error``, never a 500."""

    def parse(
        self, stream: IO[Any] | None, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        data = stream.read() if stream is not None else b""
        if isinstance(data, str):
            data = data.encode()
        if json_depth_exceeds(data):
            raise ParseError(f"JSON parse error - the body nests arrays or objects more than {MAX_JSON_DEPTH} deep.")
        return super().parse(io.BytesIO(data), media_type, parser_context)
