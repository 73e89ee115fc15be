// The draft preview's checks (templates/authoring/preview.html): while they are queued or running,
// poll the draft's status JSON and show each step's state, the sandbox runs as they finish and,
// at the end, the problems. Text only (textContent): nothing from the server is parsed as HTML.
(function () {
  "use strict";
  const box = document.getElementById("checks");
  if (!box) return;
  const url = box.dataset.statusUrl;
  const summary = document.getElementById("checks-summary");
  const bar = document.getElementById("checks-progress");
  const steps = document.getElementById("checks-steps");
  const where = document.getElementById("checks-where");
  const runs = document.getElementById("checks-runs");
  const publish = document.getElementById("publish-button");
  const refusal = document.getElementById("publish-refusal");
  const statusText = document.getElementById("draft-status");
  const STATUS = { draft: "Draft", checking: "Checking", checked: "Checked", published: "Published" };
  let delay = 500;

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function show(data) {
    box.dataset.state = data.state;
    if (statusText && STATUS[data.status]) statusText.textContent = STATUS[data.status];
    if (data.state === "done") {
      summary.textContent = (data.passed ? "Passed" : "Failed") + (data.stale ? " — stale: the draft was edited since" : "") + ".";
    } else if (data.state === "not run") {
      summary.textContent = "Not run on this text yet.";
    } else {
      const label = data.state.charAt(0).toUpperCase() + data.state.slice(1);
      summary.textContent = label + ": " + data.done + " of " + data.total + " steps done" +
        (data.runs.length ? ", " + data.runs.length + " sandbox run" + (data.runs.length === 1 ? "" : "s") + " finished" : "") + ".";
    }
    bar.max = data.total || 2;
    bar.value = data.done;
    steps.replaceChildren(...data.steps.map((step) => {
      const li = el("li", undefined, "step-" + step.state);
      li.append(el("strong", step.title), ": ", el("span", step.state));
      if (step.problems.length) {
        const ul = el("ul");
        step.problems.forEach((p) => ul.append(el("li", p)));
        li.append(ul);
      }
      return li;
    }));
    where.textContent = data.code_runs_in ? "Code runs in " + data.code_runs_in + "." : "";
    runs.hidden = !data.runs.length;
    runs.tBodies[0].replaceChildren(...data.runs.map((run) => {
      const tr = el("tr");
      tr.append(
        el("td", String(run.n)),
        el("td", run.entry || ""),
        el("td", (run.status || "") + (run.fault ? ": " + run.fault : "")),
        el("td", run.container || "—"),
        el("td", run.seconds === undefined ? "" : String(run.seconds)),
      );
      return tr;
    }));
    if (publish && data.state === "done") {
      publish.disabled = !data.publishable;
      if (data.publishable) {
        publish.removeAttribute("title");
        refusal.textContent = "";
      }
    }
  }

  function poll() {
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((data) => {
        show(data);
        if (data.state === "queued" || data.state === "running") {
          delay = Math.min(delay * 1.3, 3000);
          window.setTimeout(poll, delay);
        }
      })
      .catch(() => window.setTimeout(poll, 5000));
  }

  if (box.dataset.state === "queued" || box.dataset.state === "running") poll();
})();
