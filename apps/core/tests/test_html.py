"""The one sanitizer (apps/core/html.py), the CSP on every response and its report endpoint, and
DEBUG off on the embedded default."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import pytest
from django.test import Client

from apps.core.html import HTML_TAGS, MATHML_TAGS, sanitize, text_html
from apps.exercises.content.render import feedback_html, markdown_html
from config.env import BASE_DIR

ALLOWED_TAGS = HTML_TAGS | MATHML_TAGS
# Each must come out without an element or attribute that can run script or load anything.
HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="jav&#x61;script:alert(1)">x</a>',
    '<a href=" JAVASCRIPT:alert(1)">x</a>',
    '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
    "<details open ontoggle=alert(1)>",
    '<p style="background:url(javascript:alert(1))">x</p>',
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<math href="javascript:alert(1)"><mi>x</mi></math>',
    "<math><maction actiontype=statusline xlink:href=javascript:alert(1)>x</maction></math>",
    "<math><mtext><b onclick=alert(1)>bold</b></mtext></math>",
    "<form action=javascript:alert(1)><button>x</button></form>",
    "<object data=x></object><embed src=x>",
    "<base href=//evil.example/>",
    '<p id="__xss" name="x">clobber</p>',
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
    "<template><img src=x onerror=alert(1)></template>",
]


class _Elements(HTMLParser):
    """Every element and attribute a browser would build from the HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def dangers(html: str) -> list[str]:
    parser = _Elements()
    parser.feed(html)
    out = []
    for tag, attrs in parser.found:
        if tag not in ALLOWED_TAGS:
            out.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in ("style", "src", "srcdoc", "id", "name", "action", "xlink:href"):
                out.append(f"{tag}[{name}]")
            if name == "href" and not (value or "").startswith(("http://", "https://", "mailto:")):
                out.append(f"{tag}[href={value}]")
    return out


@pytest.mark.parametrize("html", HOSTILE)
def test_the_sanitizer_leaves_nothing_that_runs(html: str) -> None:
    out = sanitize(html)
    assert not dangers(out), out


@pytest.mark.parametrize(
    "tex",
    [
        r"\text{<img/src='x'/onerror=alert(1)>}",
        r"\mbox{<img src=x onerror=alert(1)>}",
        r"\fbox{<svg onload=alert(1)>}",
        r"\textbf{</mtext></math><img src=x onerror=alert(1)>}",
        r"\href{javascript:alert(1)}{x}",
        r"\style{background:url(javascript:alert(1))}{x}",
        r"\text{&#x3C;img src=x onerror=alert(1)&#x3E;}",
    ],
)
def test_tex_text_is_text_and_links_and_styles_are_gone(tex: str) -> None:
    out = markdown_html(f"${tex}$")
    assert "<math" in out
    assert not dangers(out), out
    assert "<mtext>" not in out or "&lt;" in out  # the markup in \\text{} is shown as text


def test_markdown_and_math_survive_the_sanitizer() -> None:
    out = markdown_html("**b** `c` [link](https://example.org) $\\frac{a}{2} \\le 4,096$\n\n|x|y|\n|--:|:-|\n|1|2|")
    for kept in ("<strong>b</strong>", "<code>c</code>", 'href="https://example.org"', "<mfrac>", "<mn>4,096</mn>",
                 'class="align-right"', 'display="inline"'):  # fmt: skip
        assert kept in out, out
    assert "[link](javascript:" in markdown_html("[link](javascript:alert(1))")  # not a link at all


def test_text_from_code_is_never_markup() -> None:
    message = "ValueError: $\\text{<img src=x onerror=alert(1)>}$ **not bold**\nline two\n\nsecond"
    out = feedback_html(message, from_code=True)
    assert "<math" not in out and "<strong>" not in out and "<img" not in out
    assert "&lt;img" in out and "line two" in out and out.count("<p") == 2
    assert text_html("") == ""


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/login/", "/signup/", "/api/v1/workbooks/", "/no/such/page/", "/admin/login/"])
def test_every_response_carries_the_csp(path: str) -> None:
    policy = Client().get(path)["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'" and directives["base-uri"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["report-uri"] == "/csp-report/"
    assert "unsafe" not in policy


@pytest.mark.django_db
def test_the_api_docs_load_no_inline_script() -> None:
    response = Client().get("/api/docs/")
    assert response.status_code == 200
    assert "<script>" not in response.content.decode()
    assert "script-src 'self'" in response["Content-Security-Policy"]


@pytest.mark.django_db
def test_csp_reports_are_logged_bounded_and_never_echoed(caplog: Any) -> None:
    client = Client()
    report = {"csp-report": {"document-uri": "http://x/w/", "violated-directive": "script-src", "blocked-uri": "inline",
                             "junk": "<script>" * 10}}  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="apps.core.csp"):
        response = client.post("/csp-report/", json.dumps(report), content_type="application/csp-report")
        assert response.status_code == 204 and response.content == b""
        assert client.post("/csp-report/", "not json", content_type="application/csp-report").status_code == 204
        assert client.post("/csp-report/", "x" * 20_000, content_type="application/csp-report").status_code == 413
    assert client.get("/csp-report/").status_code == 405
    logged = [r.getMessage() for r in caplog.records if r.name == "apps.core.csp"]
    assert len(logged) == 1 and "script-src" in logged[0] and "junk" not in logged[0]


def test_the_embedded_default_runs_with_debug_off() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "DATABASE_URL", "REDIS_URL")}
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    run = [sys.executable, "-c", code]
    off = subprocess.run(run, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings.local"},  # noqa: S603
                         cwd=BASE_DIR, capture_output=True, text=True, check=True)  # fmt: skip
    on = subprocess.run(run, env={**env, "DJANGO_SETTINGS_MODULE": "config.settings.local", "DJANGO_DEBUG": "true"},  # noqa: S603
                        cwd=BASE_DIR, capture_output=True, text=True, check=True)  # fmt: skip
    assert (off.stdout.strip(), on.stdout.strip()) == ("False", "True")
