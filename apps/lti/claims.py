"""The launch's claims, checked for type and shape before anything reads them.

A validly signed id_token is the platform's word, not a promise of well-formed data: an LMS sends
what its administrators and instructors typed (a custom parameter ``chapter = "²"``), and a bug
or a hostile platform sends anything. These models cover every claim that we, pylti1p3's message
validators and django-lti's ``sync_data_from_launch`` read, with the lengths of the columns they
land in; ``launch_claims`` runs them once per launch (platform.ToolMessageLaunch.validate_message,
after the signature and before any of those readers), and a claim of the wrong shape refuses the
launch with a 400 page naming it. Claims we do not read are left alone.

Deep linking's ``deep_link_return_url`` becomes the action of a form our page submits, so it must
be https on the registered platform's host (http only on loopback, for a platform on this
machine): ``return_url_check``, applied here and again when the response is sent.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from apps.lti.exceptions import LaunchRefused

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DL_SETTINGS_CLAIM = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
PNS_CLAIM = f"{CLAIM}platformnotificationservice"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
MAX_CHAPTER_DIGITS = 4


def _http_url(value: str) -> str:
    parts = urlsplit(value)  # ValueError (a malformed IPv6 host) is reported as a validation error
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http(s) URL")
    return value


def _no_nul(value: str) -> str:
    if "\x00" in value:  # PostgreSQL stores no NUL character in text
        raise ValueError("must not contain NUL characters")
    return value


# Every string a claim holds: a JSON string (not a number), without NUL, as long as its column.
Str = Annotated[StrictStr, AfterValidator(_no_nul)]
Id = Annotated[Str, StringConstraints(min_length=1, max_length=255)]
Text255 = Annotated[Str, StringConstraints(max_length=255)]
Text500 = Annotated[Str, StringConstraints(max_length=500)]
Text10k = Annotated[Str, StringConstraints(max_length=10_000)]
Email = Annotated[Str, StringConstraints(max_length=254)]
Short = Annotated[Str, StringConstraints(max_length=1000)]
# django-lti's URLFields hold 200 characters; LinkTarget.lineitem_url 1000.
Url200 = Annotated[Str, StringConstraints(max_length=200), AfterValidator(_http_url)]
Url1000 = Annotated[Str, StringConstraints(max_length=1000), AfterValidator(_http_url)]
Names = Annotated[list[Short], Field(max_length=100)]

_SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")
_DIGITS = re.compile(rf"[0-9]{{1,{MAX_CHAPTER_DIGITS}}}")  # ASCII only: "²".isdigit() is True, int("²") fails


def _blank_is_none(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _slug(value: str | None) -> str | None:
    if value is not None and not _SLUG.fullmatch(value):
        raise ValueError("must be a workbook's slug (letters, digits and dashes)")
    return value


def _chapter(value: str | None) -> str | None:
    if value is not None and not _DIGITS.fullmatch(value):
        raise ValueError(f"must be a chapter number written with the digits 0-9 (at most {MAX_CHAPTER_DIGITS})")
    return value


def is_chapter_number(value: str) -> bool:
    """A chapter number as we accept it anywhere: ASCII digits, bounded (never ``int("²")``)."""
    return bool(_DIGITS.fullmatch(value))


def return_url_check(url: str, *, hosts: frozenset[str]) -> str:
    """``url`` if a deep linking response may be posted there: https on one of the platform's
    hosts, or http on loopback; anything else (``javascript:``, another site) raises ValueError."""
    if not url.isascii() or "\\" in url or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValueError("must be a plain URL")
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    secure = parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK)
    if not secure or host not in hosts:
        raise ValueError("must be an https URL on the registered platform's host")
    return url


class Claim(BaseModel):
    """A claim object: extra members are ignored, and a member that is present must not be null
    (nobody downstream expects ``"title": null``; an absent member is fine)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, info in cls.model_fields.items():
                key = info.alias or name
                if key in data and data[key] is None:
                    raise PydanticCustomError("null_member", "{key} must not be null", {"key": key})
        return data


class Context(Claim):
    id: Id
    title: Text500 | None = None
    label: Text255 | None = None
    type: Names | None = None


class ResourceLink(Claim):
    id: Id
    title: Text500 | None = None
    description: Text10k | None = None


class Custom(BaseModel):
    """Custom parameters: only the two we read are checked; the rest are the platform's business."""

    model_config = ConfigDict(extra="allow", frozen=True)

    workbook: Annotated[StrictStr | None, AfterValidator(_slug)] = None
    chapter: Annotated[StrictStr | None, AfterValidator(_chapter)] = None

    @field_validator("workbook", "chapter", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return _blank_is_none(value)


class AgsEndpoint(Claim):
    scope: Names = []
    lineitems: Url200 | None = None
    lineitem: Url1000 | None = None


class NamesRoleService(Claim):
    context_memberships_url: Url200
    service_versions: Names | None = None


class DeepLinkingSettings(Claim):
    deep_link_return_url: Annotated[Str, StringConstraints(max_length=2000)]
    accept_types: Names
    accept_presentation_document_targets: Names
    accept_multiple: StrictBool | Annotated[Str, StringConstraints(max_length=5)] | None = None
    data: Annotated[Str, StringConstraints(max_length=4096)] | None = None

    @field_validator("deep_link_return_url")
    @classmethod
    def _return_url(cls, value: str, info: ValidationInfo) -> str:
        hosts = (info.context or {}).get("hosts")
        if hosts is None:  # pragma: no cover - launch_claims always passes them
            raise ValueError("no platform hosts to check against")
        return return_url_check(value, hosts=hosts)

    @property
    def multiple(self) -> bool:
        return str(self.accept_multiple).lower() == "true"


class ToolPlatform(Claim):
    guid: Id
    contact_email: Email | None = None
    description: Text10k | None = None
    name: Text500 | None = None
    url: Url200 | None = None
    product_family_code: Text500 | None = None
    version: Text500 | None = None


class PlatformNotificationService(Claim):
    platform_notification_service_url: Url200 | None = None
    notice_types_supported: Names | None = None


class LaunchClaims(Claim):
    """What a launch tells the tool, checked (``launch_claims``). The aliases are the claims'
    names, spelled out (mypy's pydantic support wants literals)."""

    sub: Id | None = None  # pylti1p3 refuses a launch without one
    name: Text500 | None = None
    given_name: Text500 | None = None
    family_name: Text500 | None = None
    email: Email | None = None
    picture: Url200 | None = None
    roles: Names | None = Field(
        None, alias="https://purl.imsglobal.org/spec/lti/claim/roles"
    )  # pylti1p3 refuses a launch without them
    context: Context | None = Field(None, alias="https://purl.imsglobal.org/spec/lti/claim/context")
    resource_link: ResourceLink | None = Field(None, alias="https://purl.imsglobal.org/spec/lti/claim/resource_link")
    custom: Custom | None = Field(None, alias="https://purl.imsglobal.org/spec/lti/claim/custom")
    ags: AgsEndpoint | None = Field(None, alias="https://purl.imsglobal.org/spec/lti-ags/claim/endpoint")
    nrps: NamesRoleService | None = Field(None, alias="https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice")
    deep_linking_settings: DeepLinkingSettings | None = Field(
        None, alias="https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
    )
    tool_platform: ToolPlatform | None = Field(None, alias="https://purl.imsglobal.org/spec/lti/claim/tool_platform")
    platform_notification_service: PlatformNotificationService | None = Field(
        None, alias="https://purl.imsglobal.org/spec/lti/claim/platformnotificationservice"
    )


_WHAT = {
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "bool_type": "must be true or false",
    "missing": "is missing",
    "string_too_short": "must not be empty",
    "too_short": "must not be empty",
}


def _where(loc: tuple[int | str, ...]) -> str:
    return " › ".join(str(part) for part in loc) or "the launch"


def launch_claims(body: dict[str, Any], *, hosts: frozenset[str]) -> LaunchClaims:
    """The launch's claims checked, or LaunchRefused (400) naming the first claim that is wrong.
    ``hosts``: the registered platform's hosts, for the deep linking return URL."""
    try:
        return LaunchClaims.model_validate(body, context={"hosts": hosts})
    except ValidationError as error:
        first = error.errors(include_url=False, include_input=False)[0]
        kind, ctx, loc = first["type"], first.get("ctx", {}), tuple(first["loc"])
        if kind in ("string_too_long", "too_long"):
            many = "items" if ctx.get("field_type") == "List" else "characters"
            what = f"is too long (at most {ctx.get('max_length')} {many})"
        elif kind == "null_member":
            loc, what = (*loc, str(ctx.get("key"))), "must not be null"
        elif kind == "value_error":
            what = str(first["msg"]).removeprefix("Value error, ")
        else:
            what = _WHAT.get(kind, str(first["msg"]))
        where = _where(loc)
        raise LaunchRefused(
            f"The platform sent a launch this tool cannot use: the claim “{where}” {what}. "
            "If this is a link's custom parameter, the course's instructor can correct it in the LMS; "
            "otherwise tell the site's administrator.",
            code="bad_claim",
            status=400,
        ) from error
