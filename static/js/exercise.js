// Progressive enhancement for the exercise page: instant feedback through the JSON API, a live
// "what we understood" preview for numbers, and for code the sandbox run's status (queued →
// running → per-test results) without reloading. Without JavaScript the forms post normally.
(function () {
  "use strict";
  const form = document.getElementById("answer-form");
  if (!form) return;
  const article = form.closest("article");
  const format = article.dataset.format;
  const feedback = document.getElementById("feedback");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function payload(which) {
    const data = new FormData(which);
    if (which !== form || format === "code") return { code: data.get("code") || "" };
    if (format === "numeric") return { answer: data.get("answer") || "" };
    if (format === "choice") return { choices: data.getAll("choices") };
    if (format === "lines") return { lines: data.getAll("lines").map(Number) };
    if (format === "table") {
      const cells = {};
      for (const [k, v] of data.entries()) if (k.startsWith("cell:")) cells[k.slice(5)] = v;
      return { cells: cells };
    }
    if (format === "parts") {
      const parts = {};
      for (const [k, v] of data.entries()) if (k.startsWith("part:")) parts[k.slice(5)] = v;
      return { parts: parts };
    }
    if (format === "order") {
      const pos = [];
      for (const [k, v] of data.entries()) if (k.startsWith("pos:")) pos.push([Number(v), k.slice(4)]);
      pos.sort((a, b) => a[0] - b[0]);
      return { order: pos.map((p) => p[1]) };
    }
    // Any other format: its widget's named inputs, one value each (as the plain form posts them).
    const fields = {};
    for (const [k, v] of data.entries()) if (k !== "csrfmiddlewaretoken" && k !== "action") fields[k] = v;
    return fields;
  }

  async function post(url, body) {
    const res = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => ({})) };
  }

  function testValue(v) {
    // A long value (a call with its arrays) cut short, the whole on demand (test_value.html).
    if (v.length <= 60) return el("code", "", v);
    const d = el("details", "long-value");
    const summary = el("summary");
    summary.append(el("code", "", v.slice(0, 47) + "…"));
    d.append(summary, el("code", "", v));
    return d;
  }

  function testTable(details) {
    // The run's summary (details.message) is the attempt's feedback, already shown above the table.
    const frag = document.createDocumentFragment();
    // The same table as templates/exercises/test_results.html: failing tests first (the server's
    // order), a hidden test with only its label and why it failed, an example in full.
    if (details.tests && details.tests.length) {
      const table = el("table", "tests");
      const caption = el("caption", "sr-only", "Test results");
      const head = el("tr");
      for (const h of ["Test", "Result", "Call", "Expected", "Got"]) { const th = el("th", "", h); th.scope = "col"; head.append(th); }
      table.append(caption, el("thead"), el("tbody"));
      table.tHead.append(head);
      for (const t of details.tests) {
        const row = el("tr", t.passed ? "pass" : "fail");
        const label = el("th", "", t.label || t.id || "");
        label.scope = "row";
        row.append(label, el("td", "result", t.passed ? "✓ passed" : "✗ " + t.message));
        if ("call" in t) {
          for (const [name, v] of [["Call", t.call], ["Expected", t.expected], ["Got", t.got]]) {
            const td = el("td", "value");
            td.dataset.label = name;
            td.append(testValue(v || ""));
            row.append(td);
          }
        } else {
          const td = el("td", "hidden-test", "Hidden test: its inputs and expected value are not shown.");
          td.colSpan = 3;
          row.append(td);
        }
        table.tBodies[0].append(row);
      }
      frag.append(table);
    }
    for (const [key, label, open] of [["traceback", "Traceback", true], ["prints", "Your output", false]]) {
      if (!details[key]) continue;
      const d = el("details"); d.open = open;
      d.append(el("summary", "", label));
      const pre = el("pre"); pre.append(el("code", "", details[key])); d.append(pre);
      frag.append(d);
    }
    return frag;
  }

  // A code run, followed live: queued → running (with its time limit and the time so far) → the
  // verdict. Each submission takes a new number; a poll of an older one stops writing, so nothing
  // stale shows after a verdict.
  let currentRun = 0;
  const FINAL = ["graded", "not_graded"];

  function statusText(a) {
    if (a.status !== "running") return "Queued for the sandbox…";
    const done = a.run && a.run.tests ? a.run.tests.length : 0;
    if (done && a.run.tests_total) {
      return "Running your code — " + done + " of " + Number(a.run.tests_total) + " tests done";
    }
    if (!a.run || !a.run.time_limit_s) return "Running your code against the tests…";
    return "Running your code against the tests — time limit " + Number(a.run.time_limit_s) + " s";
  }

  function liveTests(a) {
    // Each test's result as it completes (the final verdict replaces the list).
    const list = el("ul", "live-tests");
    for (const t of (a.run && a.run.tests) || []) {
      const item = el("li", t.passed ? "ok" : "bad", (t.passed ? "✓ " : "✗ ") + t.label);
      if (!t.passed && t.message) item.append(document.createTextNode(" — " + t.message));
      list.append(item);
    }
    return list;
  }

  function showStatus(a) {
    // Replace the line only when what it says changes (the live region reads each change out);
    // the seconds tick in a part that screen readers skip.
    let box = feedback.querySelector(".run-status");
    const text = statusText(a);
    if (!box || box.dataset.status !== a.status || box.querySelector("strong").textContent !== text) {
      box = el("div", "msg pending run-status");
      box.dataset.status = a.status;
      box.append(el("strong", "", text), document.createTextNode(" "));
      const elapsed = el("span", "elapsed");
      elapsed.setAttribute("aria-hidden", "true");
      box.append(elapsed, liveTests(a));
      feedback.replaceChildren(box);
    }
    const seconds = a.run && a.run.elapsed_s != null ? Math.floor(a.run.elapsed_s) : null;
    box.querySelector(".elapsed").textContent = seconds === null ? "" : "· " + seconds + " s so far";
  }

  async function follow(url, first) {
    // Poll the attempt until it is final: quickly at first (a pooled sandbox answers in tens of
    // milliseconds), then every 250 ms, then every second for long runs.
    // The feedback region is busy while it follows a run (assistive technology waits for it to
    // settle); once this run's polling has ended, for good, it is not.
    const mine = ++currentRun;
    feedback.setAttribute("aria-busy", "true");
    let a = first;
    try {
      for (let i = 0; i < 900; i++) {
        if (mine !== currentRun) return;
        if (a && FINAL.includes(a.status)) return await show({ status: 201, body: a });
        if (a && a.status) showStatus(a);
        await new Promise((r) => setTimeout(r, i < 4 ? 50 : i < 24 ? 250 : 1000));
        a = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then((r) => (r.ok ? r.json() : null))
          .catch(() => null); // a dropped poll is retried on the next turn
      }
    } finally {
      if (mine === currentRun) feedback.removeAttribute("aria-busy");
    }
  }

  async function show(res, region) {
    // The verdict goes by the button that asked for it: a Debug's lines above its fix (#lines-feedback).
    region = region || feedback;
    if (res.status === 202) {
      if (!FINAL.includes(res.body.status)) return follow(res.body.url, res.body);
      res = { status: 201, body: res.body }; // graded before the answer left the server
    }
    region.replaceChildren();
    if (res.status === 201 && res.body.status === "not_graded") {
      const box = el("div", "msg invalid");
      box.append(el("strong", "", "Not graded — no attempt used. "), document.createTextNode(res.body.feedback));
      region.append(box);
      return;
    }
    if (res.status === 201) {
      const a = res.body;
      const box = el("div", "msg " + (a.correct ? "correct" : "incorrect") + (a.accepted_with_note ? " noted" : ""));
      box.append(el("strong", "", a.accepted_with_note ? "✓ Accepted, with a unit note" : a.correct ? "✓ Correct" : "✗ Not yet"));
      const prose = el("div", "prose");
      prose.innerHTML = a.feedback_html; // rendered server-side from our own content
      box.append(prose);
      if (a.understood) box.append(el("div", "understood", "We read: " + a.understood));
      if (a.details && a.details.tests) box.append(testTable(a.details));
      if (a.details && a.details.cells) markCells(a.details.cells);
      if (format === "order" && window.orderWidget) {
        if (!a.correct && a.details && a.details.first_misplaced) window.orderWidget.markWrong(a.details.first_misplaced);
        else window.orderWidget.clear();
      }
      const next = document.querySelector(".prevnext a[rel=next]");
      if (a.correct && next) {
        const link = el("a", "next-link", "Next exercise: " + next.textContent.replace("→", "").trim() + " →");
        link.href = next.href;
        box.append(link);
      }
      region.append(box);
      if (a.state) document.getElementById("attempt-count").textContent = a.state.attempts;
      if (!a.state || a.correct || a.solution) await swap(["state-line", "solution", "hints"]);
      return;
    }
    const err = (res.body && res.body.error) || { message: "Something went wrong; try again." };
    const box = el("div", "msg invalid");
    box.append(el("strong", "", res.status === 400 ? "Not graded — no attempt used. " : ""), document.createTextNode(err.message));
    if (err.details && err.details.understood) box.append(el("div", "understood", "We read: " + err.details.understood));
    if (err.details && err.details.field) markUnread(err.details.field, err.details.understood);
    region.append(box);
  }

  function fieldInput(cid) {
    return form.querySelector('input[name="cell:' + CSS.escape(cid) + '"], input[name="part:' + CSS.escape(cid) + '"]');
  }

  function clearMarks() {
    // Each check starts clean: no part or cell keeps a status from an earlier one.
    for (const mark of form.querySelectorAll(".cell-mark")) mark.remove();
    for (const input of form.querySelectorAll("input[aria-invalid]")) input.removeAttribute("aria-invalid");
  }

  function markUnread(cid, understood) {
    // The part or cell we could not read (the check cost nothing; the message above says why).
    const input = fieldInput(cid);
    if (!input) return;
    input.setAttribute("aria-invalid", "true");
    const mark = el("span", "cell-mark bad", "✗ could not read this" + (understood ? " (read as " + understood + ")" : ""));
    input.after(mark);
  }

  function markCells(cells) {
    // Each graded cell says so next to its input, in words as well as colour.
    for (const [cid, v] of Object.entries(cells)) {
      const input = fieldInput(cid);
      if (!input) continue;
      input.setAttribute("aria-invalid", v.correct ? "false" : "true");
      let mark = input.parentElement.querySelector(".cell-mark");
      if (!mark) { mark = el("span", "cell-mark"); input.after(mark); }
      mark.className = "cell-mark " + (v.correct ? "ok" : "bad");
      mark.textContent = v.correct ? (v.noted ? "✓ right, with a unit note" : "✓ right") : v.answered === false ? "not answered" : "✗ " + (v.understood ? "read as " + v.understood : "wrong");
    }
  }

  async function swap(ids) {
    // The server renders the page; after a change (solved, revealed, a hint) the changed regions
    // come from a fresh copy of it, so there is one template for them, not a second in here.
    const res = await fetch(window.location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    for (const id of ids) {
      const fresh = doc.getElementById(id);
      const old = document.getElementById(id);
      if (fresh && old) old.replaceWith(document.importNode(fresh, true));
    }
    wireSections();
    document.dispatchEvent(new CustomEvent("exercise:updated", { detail: { ids: ids } }));
  }

  function wireSections() {
    // Hints one at a time and "give up" through the API, without leaving the page.
    wire(document.querySelector("#hints form"), form.dataset.hints, ["hints"], "#hints .hint:last-of-type");
    wire(document.querySelector("#solution form[data-reveal]"), form.dataset.reveal, ["state-line", "solution"], "#solution h2");
  }

  function wire(which, url, ids, focusTarget) {
    // POST to the API, then re-read the changed regions and move the focus to what appeared.
    if (!which || which.dataset.wired) return;
    which.dataset.wired = "1";
    which.addEventListener("submit", async (event) => {
      event.preventDefault();
      const res = await post(url, {});
      if (res.status !== 200) return which.submit(); // let the server say what went wrong
      await swap(ids);
      const target = document.querySelector(focusTarget);
      if (target) target.focus();
    });
  }
  wireSections();

  for (const which of [form, document.getElementById("fix-form")]) {
    if (!which) continue;
    which.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = which.querySelector("button[type=submit]");
      button.disabled = true;
      currentRun++; // a run still followed from before stops writing to the feedback
      if (which === form) clearMarks();
      let res;
      try {
        res = await post(which.dataset.api, payload(which));
      } catch (e) {
        which.submit(); // the request never got an answer: fall back to the plain form post
        return;
      }
      // Recorded: drafts.js drops the unsaved draft it kept of this code.
      if (res.status === 201 || res.status === 202) which.dispatchEvent(new CustomEvent("exercise:submitted", { detail: res.body }));
      try {
        const region = which === form ? document.getElementById("lines-feedback") : null;
        await show(res, region); // whatever fails from here on, the answer was recorded: never post it twice
      } finally {
        button.disabled = false;
      }
    });
  }

  const pending = feedback.querySelector("[data-attempt-url]");
  if (pending) follow(pending.dataset.attemptUrl);

  // As you type a number, how it will be read: the same reading the grader takes. A numeric
  // exercise has one field; each part of a multi-part exercise (a number or a formula) and each
  // table cell has its own.
  function livePreview(input, preview, field) {
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      const text = input.value.trim();
      if (!text) { preview.textContent = ""; return; }
      timer = setTimeout(async () => {
        const body = field ? { answer: text, field: field } : { answer: text };
        const res = await post(form.dataset.preview, body);
        preview.textContent = res.status === 200 ? "Reads as " + res.body.understood : (res.body.error ? res.body.error.message : "");
      }, 300);
    });
  }
  const answerInput = document.getElementById("answer");
  const answerPreview = document.getElementById("understood-preview");
  if (format === "numeric" && answerInput && answerPreview) livePreview(answerInput, answerPreview, null);
  for (const partInput of form.querySelectorAll("input[data-preview-field]")) {
    const partPreview = document.getElementById(partInput.dataset.previewOut || "part-" + partInput.dataset.previewField + "-preview");
    if (partPreview) livePreview(partInput, partPreview, partInput.dataset.previewField);
  }
})();
