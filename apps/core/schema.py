"""The OpenAPI schema tells the truth: what every operation can answer, and what it accepts.

Views annotate what is particular to them (their bodies, a 403 for a role, a 409, a 429 where
they throttle). What holds for every operation is added here, once, by a drf-spectacular
postprocessing hook (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]), so no view can forget it:

- 401 everywhere: any request with a bad ``Authorization`` header is refused before the view runs
  (even on the token endpoint, which needs no credentials).
- 404 on every operation with a path parameter (unknown, not yours, or malformed: the converters
  refuse it before the view runs), and on every paginated list (a page past the end).
- 400 (unparseable JSON, a body nested too deep), 413 (a body too large) and 415 (not JSON) on
  every operation that takes a body.
- 503 everywhere (the database is out of reach for a moment), with ``Retry-After``; every 429 and
  503 carries ``Retry-After`` (seconds).
- Path parameters declare the converters' formats and carry examples of real content, so a client
  (or a fuzzer) can reach the exercise operations without being told a slug and a number.
- Strings in request bodies and query strings declare what the server refuses: a NUL character
  (PostgreSQL text cannot hold one) and, for trimmed required fields, nothing but whitespace.
- A variant of a polymorphic body (a widget or solution per answer format) declares its
  discriminator as the one value it has, so exactly one variant of a ``oneOf`` fits a body: an
  integer widget's fields are a subset of a numeric one's, which a validator ignoring the
  discriminator (schemathesis, most generated clients) would otherwise accept under both.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from apps.core.converters import (
    EXERCISE_NUMBER_MAX_LENGTH,
    SLUG_MAX_LENGTH,
    BoundedSlugConverter,
    ExerciseNumberConverter,
)
from apps.core.serializers import ErrorOut

ERROR_REF = {"$ref": "#/components/schemas/ErrorOut"}
RETRY_AFTER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again.",
        "schema": {"type": "integer", "minimum": 0},
    }
}
# No NUL anywhere; with ``nonblank``, at least one character that str.strip() would keep.
NO_NUL = "^[^\\u0000]*$"
NONBLANK_NO_NUL = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"

# Real content, so a reader or a fuzzer reaches the exercise operations (fixtures/workbooks/).
PATH_EXAMPLES = {"slug": "transformer-math", "number": "1.1", "key": "chinchilla", "cohort_id": 1, "attempt_id": 1}
SKILL_PATH_EXAMPLES = {"slug": "scaling-book"}  # the workbook whose skills the `key` example is in

# oneOf components a field may also answer null for (drf-spectacular cannot mark a
# PolymorphicProxySerializer nullable from extend_schema_field).
NULLABLE_COMPONENTS = ("OptionalSolution", "AttemptSolution")

COMMON_ERRORS: dict[str, str] = {
    "401": "Not authenticated, or the `Authorization` header is not a valid `Token <key>` (`not_authenticated`, "
    "`authentication_failed`).",
    "404": "No such object, or not yours, or a malformed path parameter (`not_found`).",
    "400": "The request could not be read: malformed JSON, nested too deep, a NUL character, or invalid fields "
    "(`parse_error`, `validation_error`, `bad_request`; `details.fields` names the fields).",
    "413": "The body is larger than the server accepts (`too_large`).",
    "415": "The body is not JSON (`unsupported_media_type`).",
    "503": "A service the request needs is unavailable for a moment (`database_unavailable`, ...): retry after "
    "`Retry-After` seconds.",
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": dict(ERROR_REF)}}}


def _add_error(responses: dict[str, Any], code: str) -> None:
    if code not in responses:
        responses[code] = _error(COMMON_ERRORS[code])


def _path_parameter(name: str, path: str, schema: dict[str, Any]) -> dict[str, Any]:
    if name in ("slug", "key"):
        schema = {
            "type": "string",
            "pattern": f"^{BoundedSlugConverter.regex}$",
            "maxLength": SLUG_MAX_LENGTH,
        }
    elif name == "number" and "{number}" in path and "/exercises/" in path:
        schema = {
            "type": "string",
            "pattern": f"^{ExerciseNumberConverter.regex}$",
            "maxLength": EXERCISE_NUMBER_MAX_LENGTH,
        }
    elif schema.get("type") == "integer":
        schema = {**schema, "minimum": 0}  # <int:...> matches digits only
    return schema


def _nul_free(schema: dict[str, Any], *, nonblank: bool) -> None:
    if schema.get("type") != "string" or "enum" in schema or "format" in schema or "pattern" in schema:
        return
    schema["pattern"] = NONBLANK_NO_NUL if nonblank else NO_NUL


def _untrimmed() -> set[tuple[str, str]]:
    """(component, field) of CharFields with trim_whitespace=False: all-blank values are accepted there."""
    found: set[tuple[str, str]] = set()
    pending: list[type[Any]] = [serializers.Serializer]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        for name, field in getattr(cls, "_declared_fields", {}).items():
            if isinstance(field, serializers.CharField) and not field.trim_whitespace:
                found.add((cls.__name__.removesuffix("Serializer") + "Request", name))
    return found


def _request_strings(components: dict[str, Any]) -> None:
    """Request bodies: DRF's CharField refuses a NUL and (trimmed, not allow_blank) an all-blank value."""
    untrimmed = _untrimmed()
    for name, component in components.items():
        if not name.endswith("Request"):
            continue
        for field, prop in component.get("properties", {}).items():
            _request_value(prop, trimmed=(name, field) not in untrimmed)


def _request_value(prop: dict[str, Any], *, trimmed: bool) -> None:
    if prop.get("type") == "string":
        # drf-spectacular gives a not-allow_blank CharField minLength 1; DRF trims before that check.
        _nul_free(prop, nonblank=trimmed and prop.get("minLength", 0) >= 1)
    for child_key in ("items", "additionalProperties"):
        child = prop.get(child_key)
        if isinstance(child, dict):
            _request_value(child, trimmed=trimmed)


def _discriminated(components: dict[str, Any]) -> None:
    for schema in list(components.values()):
        discriminator = schema.get("discriminator") if isinstance(schema, dict) else None
        if not discriminator:
            continue
        field = discriminator["propertyName"]
        for value, ref in discriminator.get("mapping", {}).items():
            variant = components.get(ref.rsplit("/", 1)[-1], {})
            if field in variant.get("properties", {}):
                variant["properties"][field] = {"type": "string", "enum": [value]}


def postprocess(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]: see the module docstring."""
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            _add_error(responses, "401")
            parameters = operation.get("parameters", [])
            if any(p.get("in") == "path" for p in parameters) or "page" in {p.get("name") for p in parameters}:
                _add_error(responses, "404")
            if "requestBody" in operation:
                for code in ("400", "413", "415"):
                    _add_error(responses, code)
            if any(p.get("in") == "query" for p in parameters):
                _add_error(responses, "400")  # a NUL in the query string, or a value out of range
            _add_error(responses, "503")
            for code in ("429", "503"):
                if code in responses:
                    responses[code].setdefault("headers", {}).update(RETRY_AFTER)
            examples = {**PATH_EXAMPLES, **(SKILL_PATH_EXAMPLES if "/skills/" in path else {})}
            for parameter in parameters:
                if parameter.get("in") == "path":
                    parameter["schema"] = _path_parameter(parameter["name"], path, parameter.get("schema", {}))
                    if parameter["name"] in examples:
                        parameter["example"] = examples[parameter["name"]]
                elif parameter.get("in") == "query":
                    _nul_free(parameter.setdefault("schema", {}), nonblank=False)
    components = result.get("components", {}).get("schemas", {})
    _request_strings(components)
    # The answer body fits one format, which the exercise (not the body) picks; the shapes overlap
    # ({"answer": ...} is also a Debug body with neither `lines` nor `code`), so not oneOf.
    if "oneOf" in components.get("AttemptRequest", {}):
        components["AttemptRequest"]["anyOf"] = components["AttemptRequest"].pop("oneOf")
    _discriminated(components)
    for name in NULLABLE_COMPONENTS:
        if name in components:
            components[name]["nullable"] = True
    schemes = result.get("components", {}).get("securitySchemes", {})
    if "tokenAuth" in schemes:
        schemes["tokenAuth"]["description"] = (
            "Send `Authorization: Token <key>`, with the key from `POST /api/v1/auth/token/`. In Swagger UI's "
            "Authorize box type the word `Token`, a space, then the key (a bare key is refused with 401)."
        )
    return result


# Error responses every API module declares, in the one error shape.
ERRORS: dict[int, OpenApiResponse] = {
    401: OpenApiResponse(ErrorOut, description="Not authenticated."),
    404: OpenApiResponse(ErrorOut, description="No such object (or not yours)."),
}
ERRORS_PAGE = {400: OpenApiResponse(ErrorOut, description="`page_size` is not a whole number from 1 to 200.")}
