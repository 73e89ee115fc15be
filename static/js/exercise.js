// Progressive enhancement for the exercise page: instant feedback through the JSON API and a
// live "what we understood" preview for numbers. Without JavaScript the form posts normally.
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

  function payload() {
    const data = new FormData(form);
    if (format === "numeric") return { answer: data.get("answer") || "" };
    if (format === "choice") return { choices: data.getAll("choices") };
    if (format === "lines") return { lines: data.getAll("lines").map(Number) };
    if (format === "code") return { code: data.get("code") || "" };
    if (format === "table") {
      const cells = {};
      for (const [k, v] of data.entries()) if (k.startsWith("cell:")) cells[k.slice(5)] = v;
      return { cells: cells };
    }
    if (format === "order") {
      const pos = [];
      for (const [k, v] of data.entries()) if (k.startsWith("pos:")) pos.push([Number(v), k.slice(4)]);
      pos.sort((a, b) => a[0] - b[0]);
      return { order: pos.map((p) => p[1]) };
    }
    return {};
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

  function show(res) {
    feedback.replaceChildren();
    if (res.status === 201) {
      const a = res.body;
      const box = el("div", "msg " + (a.correct ? "correct" : "incorrect"));
      box.append(el("strong", "", a.correct ? "✓ Correct" : "✗ Not yet"));
      const prose = el("div", "prose");
      prose.innerHTML = a.feedback_html; // rendered server-side from our own content
      box.append(prose);
      if (a.understood) box.append(el("div", "understood", "We read: " + a.understood));
      if (a.details && a.details.cells) {
        const ul = el("ul", "cells");
        for (const [cid, v] of Object.entries(a.details.cells)) ul.append(el("li", "", cid + ": " + (v.correct ? "✓ " : "✗ ") + v.understood));
        box.append(ul);
      }
      feedback.append(box);
      document.getElementById("attempt-count").textContent = a.state.attempts;
      const stateLine = document.getElementById("state-line");
      if (a.state.solved && !stateLine.querySelector(".solved")) stateLine.prepend(el("span", "state solved", "✓ Solved "));
      if (a.solution) {
        const sol = document.getElementById("solution");
        sol.replaceChildren(el("h2", "", "Derivation"));
        if (a.solution.answer) sol.append(el("p", "answer-line", "Answer: " + a.solution.answer.text));
        const ex = el("div", "prose");
        ex.innerHTML = a.solution.explanation_html;
        sol.append(ex);
      }
      return;
    }
    const err = (res.body && res.body.error) || { message: "Something went wrong; try again." };
    const box = el("div", "msg invalid");
    box.append(el("strong", "", res.status === 400 ? "Not graded — no attempt used. " : ""), document.createTextNode(err.message));
    if (err.details && err.details.understood) box.append(el("div", "understood", "We read: " + err.details.understood));
    feedback.append(box);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      show(await post(form.dataset.api, payload()));
    } catch (e) {
      form.submit(); // network trouble: fall back to the plain form post
    }
  });

  const input = document.getElementById("answer");
  const preview = document.getElementById("understood-preview");
  if (format === "numeric" && input && preview) {
    let timer = null;
    input.addEventListener("input", () => {
      clearTimeout(timer);
      const text = input.value.trim();
      if (!text) { preview.textContent = ""; return; }
      timer = setTimeout(async () => {
        const res = await post(form.dataset.preview, { answer: text });
        preview.textContent = res.status === 200 ? "Reads as " + res.body.understood : (res.body.error ? res.body.error.message : "");
      }, 300);
    });
  }
})();
