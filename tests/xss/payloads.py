"""The XSS corpus: strings that run script if any page renders them as markup.

Each payload, if it executes, calls ``__xss(/<id>~<where>/.source)`` — a regex literal's source is
the string ``"<id>~<where>"`` without a quote character, so the same call works inside single- and
double-quoted attributes, unquoted attributes, TeX groups and Markdown link targets. ``<where>``
names the field it was placed in (``prompt``, ``cohort``, ``stdout``…), so a failure says which
input and which payload. A few call ``alert``/``confirm``/``prompt`` instead (same argument): the
browser's dialogs are trapped too, and any dialog fails the test.

Templates use ``{t}`` for the tag (``<id>~<where>``) and ``{x}`` for the whole call. They are
substituted with ``str.replace``, so TeX braces and CSS braces need no escaping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CALL = "__xss(/{t}/.source)"
TAG = re.compile(r"^[a-z0-9]+~[a-z0-9.-]+$")


@dataclass(frozen=True)
class Payload:
    id: str
    template: str
    #: "formula": contains ``{{ … }}``, which in content is our own formula syntax (a render error);
    #: "nul": contains a NUL, which PostgreSQL text and jsonb refuse — typed into pages, never stored.
    tags: frozenset[str] = frozenset()

    def render(self, where: str) -> str:
        tag = f"{self.id}~{where}"
        assert TAG.match(tag), tag
        return self.template.replace("{x}", CALL.replace("{t}", tag)).replace("{t}", tag)


def _p(pid: str, template: str, *tags: str) -> Payload:
    return Payload(pid, template, frozenset(tags))


ALL: tuple[Payload, ...] = (
    # --- plain HTML ---
    _p("h01", "<img src=x onerror={x}>"),
    _p("h02", "<svg onload={x}>"),
    _p("h03", "<script>{x}</script>"),
    _p("h04", "</script><script>{x}</script>"),
    _p("h05", '<iframe srcdoc="<script>parent.{x}</script>"></iframe>'),
    _p("h06", "<details open ontoggle={x}>"),
    _p("h07", '" onmouseover={x} x="'),
    _p("h08", "' onfocus={x} autofocus x='"),
    _p("h09", "'><img src=x onerror={x}>"),
    _p("h10", '"><svg/onload={x}>'),
    _p("h11", "<body onload={x}>"),
    _p("h12", "<input autofocus onfocus={x}>"),
    _p("h13", '<a href="javascript:{x}">h13</a>'),
    _p("h14", '<object data="javascript:{x}"></object>'),
    _p("h15", '<embed src="javascript:{x}">'),
    _p("h16", "<form><button formaction=javascript:{x}>h16</button></form>"),
    _p("h17", "<marquee onstart={x}>h17</marquee>"),
    _p("h18", "<video><source onerror={x}></video>"),
    _p("h19", "<audio src=x onerror={x}>"),
    _p("h20", "<style onload={x}></style>"),
    _p("h21", '<meta http-equiv="refresh" content="0;url=javascript:{x}">'),
    _p("h22", '<base href="javascript:{x}//">'),
    _p("h23", '<noscript><p title="</noscript><img src=x onerror={x}>">'),
    _p("h24", "<img src=x onerror=&#95;&#95;xss(/{t}/.source)>"),
    _p("h25", "<svg><script>{x}</script></svg>"),
    _p("h26", '<svg><a xlink:href="javascript:{x}"><text y=20>h26</text></a></svg>'),
    _p("h27", "<svg><animate onbegin={x} attributeName=x dur=1s>"),
    _p("h28", "<svg><foreignObject><img src=x onerror={x}></foreignObject></svg>"),
    # --- MathML, SVG and foreign-content mutation XSS ---
    _p("m01", "<math><mtext><img src=x onerror={x}></mtext></math>"),
    _p("m02", '<math href="javascript:{x}">m02</math>'),
    _p("m03", '<math><maction actiontype="statusline" onmouseover={x}>m03</maction></math>'),
    _p("m04", "<math><mtext><table><mglyph><style><img src=x onerror={x}>"),
    _p("m05", '<math><mi xlink:href="javascript:{x}">m05</mi></math>'),
    _p("m06", "<form><math><mtext></form><form><mglyph><style></math><img src=x onerror={x}>"),
    _p("m07", '<svg></p><style><a id="</style><img src=x onerror={x}>">'),
    # --- TeX inside $…$ and $$…$$ (latex2mathml) ---
    _p("t01", "$\\text{<img/src='x'/onerror={x}>}$"),
    _p("t02", "$$\\text{<img src=x onerror={x}>}$$"),
    _p("t03", "$\\mbox{<svg onload={x}>}$"),
    _p("t04", "$\\fbox{<img src=x onerror={x}>}$"),
    _p("t05", "$\\textbf{<img src=x onerror={x}>}$"),
    _p("t06", "$\\textit{<img src=x onerror={x}>}$"),
    _p("t07", "$\\href{javascript:{x}}{t07}$"),
    _p("t08", "$\\url{javascript:{x}}$"),
    _p("t09", '$\\class{x" onmouseover="{x}}{y}$'),
    _p("t10", "$\\style{background:url(javascript:{x})}{y}$"),
    _p("t11", "$\\unicode{<img src=x onerror={x}>}$"),
    _p("t12", "$\\htmlData{onerror={x}}{y}$"),
    _p("t13", "$\\operatorname{<img src=x onerror={x}>}$"),
    _p("t14", "$\\mathrm{<img src=x onerror={x}>}$"),
    _p("t15", "$x^{\\text{<svg onload={x}>}}$"),
    _p("t16", '$\\text{"><img src=x onerror={x}>}$'),
    _p("t17", "$\\text{&lt;img src=x onerror={x}&gt;}$"),
    _p("t18", "$$\\begin{array}{c}\\text{<img src=x onerror={x}>}\\end{array}$$"),
    _p("t19", "$\\text{<img/src='x'/onerror=alert(/{t}/.source)>}$"),
    _p("t20", "$\\mbox{<img src=x onerror=confirm(/{t}/.source)>}$"),
    _p("t21", "$\\textrm{<img src=x onerror={x}>}$"),
    _p("t22", "$\\fbox{<svg><script>{x}</script></svg>}$"),
    # --- Markdown links, images and autolinks to script URLs ---
    _p("k01", "[k01](javascript:{x})"),
    _p("k02", "![k02](javascript:{x})"),
    _p("k03", "[k03](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX194c3MoJ2swM35kYXRhJyk8L3NjcmlwdD4=)"),
    _p("k04", "[k04](vbscript:{x})"),
    _p("k05", "[k05](jav&#x61;script:{x})"),
    _p("k06", "[k06](JaVaScRiPt:{x})"),
    _p("k07", "[k07](<java script:{x}>)"),
    _p("k08", "[k08](%20javascript:{x})"),
    _p("k09", "<javascript:{x}>"),
    _p("k10", "[k10][r10]\n\n[r10]: javascript:{x}"),
    _p("k11", '![k11](x" onerror="{x})'),
    _p("k12", "[k12](&#106;avascript:{x})"),
    _p("k13", '<a href="javascript:{x}">k13</a>'),
    _p("k14", "[k14](java\u0000script:{x})", "nul"),
    # --- CSS ---
    _p("c01", "<style>@import 'javascript:{x}';</style>"),
    _p("c02", '<div style="background:url(javascript:{x})">c02</div>'),
    _p("c03", '<style>*{background:url("javascript:{x}")}</style>'),
    _p("c04", '<div style="x:expression({x})">c04</div>'),
    # --- template syntax: ours (formulas), Django's, JS template literals, client frameworks ---
    _p("p01", "{{constructor.constructor('{x}')()}}", "formula"),
    _p("p02", "{% if 1 %}<img src=x onerror={x}>{% endif %}"),
    _p("p03", "${{x}}"),
    _p("p04", "{{ {x} }}", "formula"),
    _p("p05", "<%= {x} %>#{{x}}"),
    _p("p06", "{{7*7}}<img src=x onerror={x}>", "formula"),
    # --- breaking out of the element or string it lands in ---
    _p("b01", "</script><img src=x onerror={x}>"),
    _p("b02", "</textarea><img src=x onerror={x}>"),
    _p("b03", "</title><img src=x onerror={x}>"),
    _p("b04", "</style><img src=x onerror={x}>"),
    _p("b05", "--><img src=x onerror={x}>"),
    _p("b06", "]]><img src=x onerror={x}>"),
    _p("b07", "\u2028\u2029</script><script>{x}</script>"),
    _p("b08", '"};{x};//'),
    _p("b09", "';{x};//"),
    _p("b10", "</noscript><img src=x onerror={x}>"),
    # --- NUL bytes and unicode tricks ---
    _p("u01", "<img\u0000 src=x onerror={x}>", "nul"),
    _p("u02", "\uff1cimg src=x onerror={x}\uff1e"),
    _p("u03", "<img src=x onerror={x}\u200b>"),
    _p("u04", "<scr\u0130pt>{x}</script>"),
    _p("u05", "<img src=x onerror=\\u0061lert(/{t}/.source)>"),
    _p("u06", "\u202e<img src=x onerror={x}>"),
    _p("u07", "%3Cimg%20src%3Dx%20onerror%3D{x}%3E"),
    _p("u08", "&lt;img src=x onerror={x}&gt;"),
    _p("u09", "<img src=x onerror={x} "),
    # --- dialogs ---
    _p("d01", "<img src=x onerror=alert(/{t}/.source)>"),
    _p("d02", "<svg onload=prompt(/{t}/.source)>"),
)

BY_ID = {p.id: p for p in ALL}
assert len(BY_ID) == len(ALL), "payload ids are unique"

#: What an author's content may hold: no formula syntax (a render error by design), no NUL.
CONTENT: tuple[Payload, ...] = tuple(p for p in ALL if not p.tags)
#: What may be stored anywhere (code, names): no NUL.
STORABLE: tuple[Payload, ...] = tuple(p for p in ALL if "nul" not in p.tags)


def prose(where: str, payloads: tuple[Payload, ...] = CONTENT) -> str:
    """Markdown: one payload a paragraph (TeX dollars cannot pair across paragraphs)."""
    return "\n\n".join(p.render(where) for p in payloads)


def chunks(payloads: tuple[Payload, ...], n: int) -> list[tuple[Payload, ...]]:
    """``payloads`` in ``n`` round-robin groups, each non-empty."""
    return [payloads[i::n] for i in range(n)]


def fired_ids(tags: list[str]) -> list[str]:
    """``["t01~prompt", …]`` as given, sorted, without duplicates."""
    return sorted(set(tags))
