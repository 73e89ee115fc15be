"""LMS input for the corpus: the repository's test LTI 1.3 platform (apps/lti/tests/platform.py),
with payloads in everything a course's LMS sends about the course, the link and the person.

``CorpusPlatform`` signs the same real id_tokens as the test platform; what it changes is the
content of the claims (context title and label, resource link title and description, the
person's name, given and family names, their subject, custom parameters) and of the roster it
serves (NRPS), and it adds a course page whose login carries payloads in ``login_hint`` (the
subject) and ``lti_message_hint``, which the tool's cookie check page passes on."""

from __future__ import annotations

from html import escape
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from apps.lti.tests.platform import CLAIM, LEARNER, TestPlatform
from tests.xss.content import line
from tests.xss.payloads import BY_ID, STORABLE, Payload

CLIENT_ID = "xss-corpus-tool"  # this package's registration (and what an interrupted run left)

# Breakouts first: a cohort's name is the context title's first 120 characters.
_FIRST = ("h09", "b03", "h07", "h01", "t01", "h03")
_ORDERED: tuple[Payload, ...] = tuple(BY_ID[i] for i in _FIRST) + tuple(p for p in STORABLE if p.id not in _FIRST)


def text(where: str, cap: int) -> str:
    """Payloads on one line, tagged ``where``, as many as fit in ``cap`` (the claim's limit)."""
    return line(where, _ORDERED, cap=cap)


# The subjects (LTI user ids) of the course's people: the instructor's and learner's hold payloads.
INSTRUCTOR_SUB = text("sub-teacher", 200)
LEARNER_SUB = text("sub-learner", 200)
ROSTER_SUB = text("sub-roster", 200)


def person(who: str) -> dict[str, str]:
    """A person's name claims (users' first and last names hold 150 characters)."""
    return {
        "name": text(f"name-{who}", 500),
        "given_name": text(f"given-{who}", 150),
        "family_name": text(f"family-{who}", 150),
    }


class CorpusPlatform(TestPlatform):
    __test__ = False
    client_id = CLIENT_ID

    def __init__(self) -> None:
        #: Claims to set on the next id_token /auth signs (after TestPlatform.claims): a context
        #: without title (``None``) has only its label, as some LMSs send.
        self.context: dict[str, Any] = {}
        self.person: dict[str, str] = {}
        self.link_title = text("link-title", 500)
        self.link_description = text("link-description", 2000)
        super().__init__()

    def claims(self, **kwargs: Any) -> dict[str, Any]:
        body = super().claims(**kwargs)
        context = {**body[CLAIM + "context"], **self.context}
        body[CLAIM + "context"] = {k: v for k, v in context.items() if v is not None}
        body.update(self.person)
        if CLAIM + "resource_link" in body:
            body[CLAIM + "resource_link"] |= {"title": self.link_title, "description": self.link_description}
        return body

    def course_url(self, sub: str, message_hint: str = "") -> str:
        return self.base + "/xss-course?" + urlencode({"sub": sub, "hint": message_hint})

    def roster_member(self, sub: str, names: dict[str, str]) -> dict[str, Any]:
        return {"user_id": sub, "status": "Active", "roles": LEARNER, **names}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler()
        platform = self

        class Handler(base):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                parsed = urlparse(self.path)
                if parsed.path != "/xss-course":
                    super().do_GET()
                    return
                # The LMS's course page: the tool in an iframe, its login with the LMS's hints.
                query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
                params = {
                    "iss": platform.issuer,
                    "login_hint": query["sub"],
                    "target_link_uri": platform.tool_url + "/lti/launch/",
                    "client_id": platform.client_id,
                    "lti_deployment_id": platform.deployment_id,
                }
                if query.get("hint"):
                    params["lti_message_hint"] = query["hint"]
                login = platform.tool_url + "/lti/login/?" + urlencode(params)
                self._html(
                    "<!doctype html><title>Course</title><h1>A course</h1>"
                    f'<iframe id="tool" src="{escape(login)}" width="1000" height="700"></iframe>'
                )

        return Handler
