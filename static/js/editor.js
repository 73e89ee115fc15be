// A small code editor for Python answers, and Python highlighting for static code.
//
// Every textarea[data-code-editor] stays the real, labelled form control; behind it an
// aria-hidden <pre><code> mirror shows the same text highlighted (the textarea's own text is
// transparent, its caret visible). The two share font, padding and line-height, and the mirror
// follows the textarea's scroll, so every glyph sits exactly under its caret position.
// Keys: Tab indents (the selected lines, if any), Shift+Tab dedents, Enter keeps the indentation
// (one level more after a line ending in ":"), Backspace in leading spaces goes back one level.
// Escape, then Tab, lets Tab move focus on, so the keyboard is never trapped.
//
// Static code is highlighted too: `pre code.language-python` (Markdown fences, reference
// solutions) and each line of a Debug exercise's line list (`.code-lines code`), also when such
// elements are added to the page later. Without JavaScript the plain textarea remains.
(function () {
  "use strict";

  // ---------------------------------------------------------------------------------------------
  // Tokenizer
  // ---------------------------------------------------------------------------------------------

  const KEYWORDS = new Set(
    ("and as assert async await break class continue def del elif else except finally for from " +
      "global if import in is lambda nonlocal not or pass raise return try while with yield").split(" ")
  );
  const BUILTINS = new Set(
    ("True False None NotImplemented Ellipsis __name__ __file__ " +
      "abs all any ascii bin bool breakpoint bytearray bytes callable chr classmethod compile " +
      "complex delattr dict dir divmod enumerate eval exec filter float format frozenset getattr " +
      "globals hasattr hash hex id input int isinstance issubclass iter len list locals map max " +
      "memoryview min next object oct open ord pow print property range repr reversed round set " +
      "setattr slice sorted staticmethod str sum super tuple type vars zip __import__ " +
      "BaseException Exception ArithmeticError AssertionError AttributeError FloatingPointError " +
      "ImportError IndexError KeyError LookupError MemoryError NameError NotImplementedError " +
      "OSError OverflowError RecursionError RuntimeError StopIteration TypeError ValueError " +
      "ZeroDivisionError").split(" ")
  );

  // Sticky patterns, tried at one position each; the first character decides which apply.
  const NAME = /[A-Za-z_\u00AA-\uFFFF][\w\u00AA-\uFFFF]*/y; // identifiers (Unicode letters too)
  const DECO = /@[A-Za-z_\u00AA-\uFFFF][\w.\u00AA-\uFFFF]*/y;
  const NUM = /0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?[jJ]?/y;
  const OP = /\*\*=?|\/\/=?|>>=?|<<=?|->|:=|[-+*/%&|^~<>=!@]=?/y;
  const SPACE = /\s+/y;
  const PREFIX = /(?:[rR][bBfF]?|[bBfF][rR]?|[uU])(?=['"])/y; // r, b, f, u, rb, br, rf, fr
  // A string's body after its opening quote, up to and including the closing quote (group 1),
  // or to the end of the line when it does not close there (group 1 is then empty).
  const BODY = {
    "'''": /(?:[^'\\]|\\[^]?|'(?!''))*('''|$)/y,
    '"""': /(?:[^"\\]|\\[^]?|"(?!""))*("""|$)/y,
    "'": /(?:[^'\\]|\\[^]?)*('|$)/y,
    '"': /(?:[^"\\]|\\[^]?)*("|$)/y,
  };

  function at(re, text, i) {
    re.lastIndex = i;
    const m = re.exec(text);
    return m ? m[0] : null;
  }

  /**
   * Split one line of Python into [type, text] pairs (type: a tok-* suffix or ""). `open` is the
   * triple quote of a string left open by the previous line, or "". Returns the tokens and the
   * string still open at the end of this line. Lines are the unit so that results can be cached.
   */
  function tokenizeLine(line, open) {
    const out = [];
    let i = 0;
    if (open) {
      BODY[open].lastIndex = 0;
      const m = BODY[open].exec(line);
      if (m[0]) out.push(["str", m[0]]);
      if (!m[1]) return { out, open };
      i = m[0].length;
      open = "";
    }
    let prev = ""; // the previous significant token: "def"/"class" name a function, "." an attribute
    let atStart = true; // only indentation so far: where a decorator may stand
    while (i < line.length) {
      const ch = line[i];
      let type = "";
      let v = null;
      const prefix = ch === "'" || ch === '"' ? "" : at(PREFIX, line, i);
      if (ch === "#") {
        v = line.slice(i);
        type = "com";
      } else if (prefix !== null) {
        const q0 = i + prefix.length;
        const quote = line.startsWith(line[q0].repeat(3), q0) ? line[q0].repeat(3) : line[q0];
        BODY[quote].lastIndex = q0 + quote.length;
        const m = BODY[quote].exec(line);
        v = line.slice(i, q0 + quote.length) + m[0];
        type = "str";
        if (!m[1] && quote.length === 3) open = quote; // continues on the next line
      } else if ((ch >= "0" && ch <= "9") || (ch === "." && line[i + 1] >= "0" && line[i + 1] <= "9")) {
        v = at(NUM, line, i);
        type = "num";
      } else if (ch === "@" && atStart && (v = at(DECO, line, i))) {
        type = "deco";
      } else if ((v = at(NAME, line, i))) {
        if (prev === "def" || prev === "class") type = "fn";
        else if (prev === ".") type = "";
        else if (KEYWORDS.has(v)) type = "kw";
        else if (BUILTINS.has(v)) type = "builtin";
      } else if ((v = at(SPACE, line, i))) {
        out.push(["", v]);
        i += v.length;
        continue;
      } else if ((v = at(OP, line, i))) {
        type = "op";
      } else {
        v = ch; // brackets, commas, dots, colons and anything unexpected
      }
      out.push([type, v]);
      i += v.length;
      atStart = false;
      if (type !== "com") prev = v;
    }
    return { out, open };
  }

  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

  // (string open before the line, line) -> the line's HTML and the string open after it. Typing
  // changes one line, so re-highlighting a long file is mostly cache hits.
  const lineCache = new Map();

  function lineHtml(line, open) {
    const key = open + "\u0000" + line;
    let hit = lineCache.get(key);
    if (!hit) {
      const r = tokenizeLine(line, open);
      let html = "";
      for (const [type, value] of r.out) html += type ? '<span class="tok-' + type + '">' + escapeHtml(value) + "</span>" : escapeHtml(value);
      hit = { html, open: r.open };
      if (lineCache.size > 5000) lineCache.clear();
      lineCache.set(key, hit);
    }
    return hit;
  }

  /** Highlighted HTML, one string per line; a triple-quoted string carries over between lines. */
  function highlightLines(text) {
    let open = "";
    return text.split("\n").map((line) => {
      const r = lineHtml(line, open);
      open = r.open;
      return r.html;
    });
  }

  /** Highlighted HTML for Python source: spans with class tok-<type>; everything escaped. */
  const highlight = (text) => highlightLines(text).join("\n");

  // ---------------------------------------------------------------------------------------------
  // Static blocks
  // ---------------------------------------------------------------------------------------------

  const STATIC = "pre code.language-python, pre code.language-py, .code-lines code";
  const rendered = new WeakMap(); // element -> the innerHTML we gave it, so re-runs are no-ops

  function highlightBlock(code) {
    if (rendered.get(code) === code.innerHTML) return;
    code.innerHTML = highlight(code.textContent);
    rendered.set(code, code.innerHTML);
    code.classList.add("highlighted");
  }

  // ---------------------------------------------------------------------------------------------
  // Editor
  // ---------------------------------------------------------------------------------------------

  const INDENT = "    ";
  let uid = 0;

  function el(tag, cls) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    return node;
  }

  /** Replace value[start:end] with text, keeping the browser's undo history where it can. */
  function replaceRange(ta, start, end, text) {
    ta.setSelectionRange(start, end);
    let done = false;
    try {
      // execCommand is deprecated but still the only way to edit a textarea with undo (Ctrl+Z).
      done = text ? document.execCommand("insertText", false, text) : start === end || document.execCommand("delete");
    } catch (e) {
      done = false;
    }
    if (!done) {
      ta.setRangeText(text, start, end, "end");
      ta.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }

  /** The code part of a line: its last significant token, ignoring a trailing comment. */
  function lastSignificant(line) {
    const toks = tokenizeLine(line, "").out.filter(([type, v]) => type !== "com" && v.trim());
    return toks.length ? toks[toks.length - 1][1] : "";
  }

  function enhance(ta) {
    if (ta.classList.contains("code-editor-input")) return; // already done
    const wrap = el("div", "code-editor");
    const gutter = el("div", "code-editor-gutter");
    const numbers = el("div", "code-editor-lines");
    const body = el("div", "code-editor-body");
    const mirror = el("pre", "code-editor-mirror");
    const code = el("code");
    gutter.setAttribute("aria-hidden", "true");
    mirror.setAttribute("aria-hidden", "true");
    gutter.append(numbers);
    mirror.append(code);
    ta.before(wrap);
    body.append(mirror, ta);
    wrap.append(gutter, body);
    ta.classList.add("code-editor-input");
    ta.setAttribute("wrap", "off"); // long lines scroll instead of wrapping (the mirror cannot wrap identically)

    describeKeys(ta, wrap);

    let lineCount = -1;
    let metrics = null;
    let frame = 0; // the textarea's borders plus a horizontal scrollbar, if any
    let queued = false; // a layout check is waiting for the next animation frame
    const measure = () => {
      frame = ta.offsetHeight - ta.clientHeight;
      const cs = getComputedStyle(ta);
      metrics = {
        lh: parseFloat(cs.lineHeight),
        pad: parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom),
        min: Math.max(ta.rows || 2, 2),
      };
    };

    function sync() {
      // Both layers translate by the textarea's scroll offsets; a transform (rather than the
      // mirror's own scrollTop) cannot run out of scroll range when the textarea has scrollbars.
      const x = ta.scrollLeft;
      const y = ta.scrollTop;
      code.style.transform = x || y ? "translate(" + -x + "px," + -y + "px)" : "";
      numbers.style.transform = y ? "translateY(" + -y + "px)" : "";
    }

    // The mirror holds one block <span> per line, so typing re-renders, and the browser re-lays
    // out, only the lines that changed (re-tokenizing is cheap: unchanged lines are cached).
    let shown = []; // the HTML of each line's span, as last rendered

    function paint(text) {
      // An empty line gets a space: an empty block would have no height.
      const next = highlightLines(text).map((html) => html || " ");
      let head = 0;
      while (head < next.length && head < shown.length && next[head] === shown[head]) head++;
      let tail = 0;
      while (tail < next.length - head && tail < shown.length - head && next[next.length - 1 - tail] === shown[shown.length - 1 - tail]) tail++;
      const nodes = code.children;
      for (let i = shown.length - tail - 1; i >= head; i--) nodes[i].remove();
      if (next.length - tail > head) {
        const tpl = document.createElement("template");
        tpl.innerHTML = next.slice(head, next.length - tail).map((h) => "<span>" + h + "</span>").join("");
        code.insertBefore(tpl.content, nodes[head] || null);
      }
      shown = next;
      return next.length;
    }

    function render() {
      const text = ta.value;
      const lines = paint(text);
      if (!metrics) measure();
      if (lines !== lineCount) {
        lineCount = lines;
        let s = "";
        for (let i = 1; i <= lines; i++) s += i + "\n";
        numbers.textContent = s;
        wrap.style.setProperty("--gutter-digits", String(String(lines).length));
      }
      size();
      // Reading layout here would force it in the middle of typing; the frame (borders and a
      // horizontal scrollbar, which appears and goes with long lines) is checked at the next
      // animation frame, where that layout happens anyway.
      if (!queued) { queued = true; requestAnimationFrame(check); }
    }

    function size() {
      // Grow with the content (CSS max-height then makes it scroll). Computed from the line
      // count, not scrollHeight, so the page never jumps while the height is re-measured.
      ta.style.height = Math.max(lineCount, metrics.min) * metrics.lh + metrics.pad + frame + "px";
    }
    function check() {
      queued = false;
      const f = ta.offsetHeight - ta.clientHeight;
      if (f !== frame) { frame = f; size(); }
      sync();
    }

    let escaped = false; // Escape was the last key: the next Tab leaves the editor
    ta.addEventListener("keydown", (e) => {
      if (e.isComposing || e.defaultPrevented || ta.readOnly || ta.disabled) return;
      if (e.key === "Escape") { escaped = true; return; }
      const wasEscaped = escaped;
      escaped = false;
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const { selectionStart: a, selectionEnd: b, value } = ta;
      const lineStart = value.lastIndexOf("\n", a - 1) + 1;

      if (e.key === "Tab") {
        if (wasEscaped) return; // let the browser move focus
        e.preventDefault();
        if (e.shiftKey || a !== b) shiftLines(e.shiftKey ? -1 : 1);
        else replaceRange(ta, a, b, INDENT);
      } else if (e.key === "Enter" && !e.shiftKey) {
        const before = value.slice(lineStart, a);
        let indent = before.match(/^[ \t]*/)[0];
        if (indent.length === before.length) indent = before; // caret inside the indentation
        else {
          const last = lastSignificant(before);
          if (last === ":") indent += INDENT;
          else if (/^\s*(return|pass|break|continue|raise)\b/.test(before) && indent.length >= 4) indent = indent.slice(4);
        }
        e.preventDefault();
        replaceRange(ta, a, b, "\n" + indent);
      } else if (e.key === "Backspace" && a === b && a > lineStart) {
        const before = value.slice(lineStart, a);
        if (/^ +$/.test(before)) {
          // In the indentation: back to the previous multiple of four spaces.
          e.preventDefault();
          replaceRange(ta, a - ((before.length - 1) % 4 + 1), a, "");
        }
      }
    });
    ta.addEventListener("blur", () => { escaped = false; });

    /** Indent (dir 1) or dedent (dir -1) every line the selection touches. */
    function shiftLines(dir) {
      const { selectionStart: a, selectionEnd: b, value } = ta;
      const start = value.lastIndexOf("\n", a - 1) + 1;
      // A selection ending at the start of a line does not include that line.
      const last = b > a && value[b - 1] === "\n" ? b - 1 : b;
      let end = value.indexOf("\n", last);
      if (end === -1) end = value.length;
      const lines = value.slice(start, end).split("\n");
      const deltas = lines.map((line) => {
        if (dir > 0) return line ? 4 : 0; // empty lines stay empty
        return -(line.startsWith("\t") ? 1 : line.match(/^ {0,4}/)[0].length);
      });
      const block = lines.map((line, i) => (deltas[i] > 0 ? INDENT + line : line.slice(-deltas[i]))).join("\n");
      if (block === value.slice(start, end)) return; // nothing to dedent
      const total = deltas.reduce((s, d) => s + d, 0);
      replaceRange(ta, start, end, block);
      const newA = a === start && dir > 0 ? start : Math.max(start, a + deltas[0]);
      ta.setSelectionRange(newA, Math.max(newA, b + total));
    }

    ta.addEventListener("input", render);
    ta.addEventListener("scroll", sync, { passive: true });
    // Programmatic changes (form reset, a restored page) fire no input event.
    if (ta.form) ta.form.addEventListener("reset", () => setTimeout(render));
    window.addEventListener("pageshow", render);
    window.addEventListener("resize", () => { measure(); render(); });
    render();
  }

  /** Tell keyboard and screen-reader users about Tab: reveal the template's hint or add one. */
  function describeKeys(ta, wrap) {
    const ids = (ta.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    for (const id of ids) {
      const hint = document.getElementById(id);
      const keys = hint && hint.querySelector("[data-editor-keys]");
      if (keys) { keys.hidden = false; return; }
    }
    const p = el("p", "help editor-keys");
    p.id = (ta.id || "code-editor-" + ++uid) + "-keys";
    p.textContent = "Tab indents; Esc then Tab leaves the editor.";
    wrap.after(p);
    ta.setAttribute("aria-describedby", ids.concat(p.id).join(" "));
  }

  // ---------------------------------------------------------------------------------------------
  // Start, and follow content added later (feedback, a revealed solution)
  // ---------------------------------------------------------------------------------------------

  function scan(root) {
    if (root.matches && root.matches("textarea[data-code-editor]")) enhance(root);
    else if (root.matches && root.matches(STATIC)) highlightBlock(root);
    if (!root.querySelectorAll) return;
    for (const ta of root.querySelectorAll("textarea[data-code-editor]")) enhance(ta);
    for (const code of root.querySelectorAll(STATIC)) highlightBlock(code);
  }

  function start() {
    if (document.documentElement.dataset.codeEditor) return; // the script was included twice
    document.documentElement.dataset.codeEditor = "ready";
    scan(document);
    new MutationObserver((records) => {
      for (const r of records) {
        const t = r.target;
        if (t.closest && t.closest(".code-editor")) continue; // our own mirror updates
        if (rendered.has(t)) { highlightBlock(t); continue; } // a highlighted block's text was replaced
        for (const node of r.addedNodes) if (node.nodeType === 1) scan(node);
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
