// The Precheck button of a code form, without a reload: it posts the code to the precheck API,
// follows the run (queued → running, "2 of 3 done") as exercise.js follows a submission, and then
// puts the server's own rendering of the result (templates/exercises/_precheck_result.html) in
// place, so there is one template for it. Nothing here touches the attempt count or the answer
// feedback: a precheck is not graded. Without JavaScript the button posts the form (name=precheck)
// and the page shows the same result.
(function () {
  "use strict";
  const button = document.querySelector("[data-precheck-button]");
  const region = document.getElementById("precheck-result");
  if (!button || !region) return;
  const form = button.form;
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const FINAL = ["checked", "not_run"];
  const NOTE = "Precheck: examples and structure only — not graded";
  let current = 0;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function box(cls, strong, text) {
    const b = el("div", "msg precheck-box " + cls);
    b.append(el("p", "precheck-label", NOTE), el("strong", "", strong));
    if (text) b.append(document.createTextNode(" " + text));
    return b;
  }

  function statusText(p) {
    if (p.status !== "running") return "Precheck queued for the sandbox…";
    const done = (p.tests || []).length;
    return "Prechecking your code — " + done + " of " + Number(p.tests_total || 0) + " done";
  }

  function showStatus(p) {
    // Replace the line only when what it says changes: the live region reads each change out.
    const text = statusText(p);
    const old = region.querySelector(".precheck-box.pending strong");
    if (old && old.textContent === text) return;
    region.replaceChildren(box("pending", text));
  }

  async function showResult(p) {
    // The server renders the result; a failed fetch falls back to the summary line.
    try {
      const url = window.location.pathname + "?precheck=" + encodeURIComponent(p.id);
      const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
      if (res.ok) {
        const doc = new DOMParser().parseFromString(await res.text(), "text/html");
        const fresh = doc.getElementById("precheck-result");
        if (fresh && fresh.querySelector(".precheck-box")) {
          region.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
          document.dispatchEvent(new CustomEvent("exercise:updated", { detail: { ids: ["precheck-result"] } }));
          return;
        }
      }
    } catch (e) {
      // fall through to the summary
    }
    if (p.status === "not_run") region.replaceChildren(box("invalid", "Could not run.", p.message));
    else region.replaceChildren(box(p.outcome === "passed" ? "correct" : "incorrect", p.outcome === "passed" ? "✓ Precheck passed" : "✗ Precheck: not yet", p.message));
  }

  async function follow(p) {
    // Poll until final: quickly at first (a pooled sandbox answers in tens of milliseconds), then
    // every 250 ms, then every second. A newer precheck stops an older one's polling.
    const mine = ++current;
    region.setAttribute("aria-busy", "true");
    try {
      for (let i = 0; i < 600; i++) {
        if (mine !== current) return;
        if (p && FINAL.includes(p.status)) return await showResult(p);
        if (p && p.status) showStatus(p);
        await new Promise((r) => setTimeout(r, i < 4 ? 50 : i < 24 ? 250 : 1000));
        const next = await fetch(p.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
          .then((r) => (r.ok ? r.json() : null))
          .catch(() => null); // a dropped poll is retried on the next turn
        if (next) p = next;
      }
    } finally {
      if (mine === current) region.removeAttribute("aria-busy");
    }
  }

  button.addEventListener("click", async (event) => {
    // Not a submission: the click never reaches the form's submit (exercise.js's handler).
    event.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    try {
      region.replaceChildren(box("pending", "Sending your code for a precheck…"));
      let res;
      try {
        const r = await fetch(button.dataset.api, {
          method: "POST",
          credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
          body: JSON.stringify({ code: new FormData(form).get("code") || "" }),
        });
        res = { status: r.status, body: await r.json().catch(() => ({})) };
      } catch (e) {
        region.replaceChildren(box("invalid", "The precheck did not run — nothing was counted.", "The request did not reach the server; try again."));
        return;
      }
      if (res.status !== 202) {
        const err = (res.body && res.body.error) || { message: "Something went wrong; try again." };
        region.replaceChildren(box("invalid", "The precheck did not run — nothing was counted.", err.message));
        return;
      }
      await follow(res.body);
    } finally {
      button.disabled = false;
    }
  });

  // A page opened on a pending precheck (the form posted without JavaScript, then a reload).
  const pending = region.querySelector("[data-precheck-url]");
  if (pending) follow({ id: pending.dataset.precheckId, url: pending.dataset.precheckUrl, status: pending.dataset.status });
})();
