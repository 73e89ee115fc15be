"""The one HTML sanitizer: every piece of HTML built from content or from anything a user typed
passes :func:`sanitize` before a template or a script inserts it.

An allowlist (nh3, the binding of Rust's ammonia, which parses as a browser does, foreign MathML
content included) for exactly what we produce: CommonMark + tables from markdown-it, MathML from
latex2mathml, code highlighted by Pygments (classes, no inline styles). Links only to http(s),
mailto and our own pages; no ``src`` at all (we render no images), no ``style``, no event handler.
Inside ``<math>`` only MathML elements survive: raw HTML there (``\\text{<img …>}``) is dropped.

Text that comes from learners' code (exception messages, stdout, test names) is not markup at all:
:func:`text_html` escapes it and keeps its line breaks.
"""

from __future__ import annotations

import re
from functools import lru_cache

import nh3
from django.utils.html import escape

# What markdown-it (CommonMark + tables) and our own templates' fragments emit.
HTML_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "b", "i", "s", "del", "code",
    "pre", "kbd", "samp", "sub", "sup", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody",
    "tr", "th", "td", "span", "div",
}  # fmt: skip
# What latex2mathml emits (Presentation MathML).
MATHML_TAGS = {
    "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac",
    "msqrt", "mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover", "mmultiscripts",
    "mprescripts", "none", "mtable", "mtr", "mtd", "mstyle", "mpadded", "mphantom", "menclose",
    "merror",
}  # fmt: skip
_MATHML_ATTRIBUTES = {
    "display", "xmlns", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace", "accent",
    "accentunder", "movablelimits", "largeop", "symmetric", "minsize", "maxsize", "form", "columnalign",
    "columnspacing", "columnlines", "rowspacing", "rowlines", "frame", "width", "height", "depth",
    "linethickness", "notation", "scriptlevel", "displaystyle", "voffset", "mathsize", "encoding",
}  # fmt: skip

ALLOWED_ATTRIBUTES: dict[str, set[str]] = {
    # No id or name: content must not clobber the page's own elements or globals.
    "*": {"class", "title", "aria-hidden"},
    "a": {"href"},
    "ol": {"start"},
    "th": {"scope", "colspan", "rowspan"},
    "td": {"colspan", "rowspan"},
    **dict.fromkeys(MATHML_TAGS, _MATHML_ATTRIBUTES),
}
URL_SCHEMES = {"http", "https", "mailto"}

# markdown-it aligns table cells with style="text-align:…"; styles are not allowed, classes are.
_ALIGN = re.compile(r' style="text-align:(left|right|center)"')


def _clean(html: str, tags: set[str]) -> str:
    return nh3.clean(
        html,
        tags=tags,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
        clean_content_tags={"script", "style", "template", "iframe", "object", "embed", "svg", "textarea", "title"},
    )


_MATH = re.compile(r"<math\b.*?</math>", re.DOTALL)


@lru_cache(maxsize=4096)
def sanitize(html: str) -> str:
    """``html`` with everything outside our subset removed (an idempotent, cached pure function)."""
    out = _clean(_ALIGN.sub(r' class="align-\1"', html), HTML_TAGS | MATHML_TAGS)
    # A second pass over each formula with MathML alone: no HTML element inside math, where
    # browsers' parsing of foreign content has bred mutation XSS.
    return _MATH.sub(lambda m: _clean(m.group(0), MATHML_TAGS), out)


def text_html(text: str) -> str:
    """Plain text (a learner's program's output or exception) as HTML: escaped, never Markdown or
    math, paragraphs on blank lines and line breaks kept."""
    if not text:
        return ""
    paragraphs = re.split(r"\n\s*\n", text.strip())
    return "".join(f'<p class="plain">{escape(p).replace(chr(10), "<br>")}</p>' for p in paragraphs)
