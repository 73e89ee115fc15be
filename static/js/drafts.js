// The learner's code is never lost. The exercise page opens each code editor on the learner's last
// submission (the server renders it, so that much works without JavaScript); this script adds, for
// every textarea[data-draft]:
//
// - an unsaved draft in this browser's localStorage, per user, exercise, content version and field
//   ("mlsys.draft:<user>:<workbook>/<number>@<version>:<field>"), written on every edit;
// - on load, the draft put back over the last submission when it differs and is newer — it was
//   begun from that same submission, or saved after it was made (on another device, say) — with
//   a short "Restored your unsaved draft" note; an older or identical draft is dropped;
// - the draft cleared once a submission is recorded (exercise.js fires "exercise:submitted" on the
//   form; a submission that is refused keeps it, since nothing of it was saved);
// - "Reset to starter", behind a confirmation in a <details> (as "Give up" is): it puts the starter
//   code back (Ctrl+Z in the editor undoes it) and clears the draft.
//
// Drafts of the exercise's other versions are removed (their starter and tests were different).
(function () {
  "use strict";
  const PREFIX = "mlsys.draft:";
  let store = null;
  try {
    store = window.localStorage; // reading it throws where storage is disabled
    store.getItem(PREFIX);
  } catch (e) {
    store = null;
  }

  function read(key) {
    try {
      const draft = JSON.parse(store.getItem(key));
      return draft && typeof draft.code === "string" && typeof draft.at === "number" ? draft : null;
    } catch (e) {
      return null;
    }
  }
  function write(key, draft) {
    try {
      store.setItem(key, JSON.stringify(draft));
    } catch (e) {
      // Full or refused: the editor still holds the text.
    }
  }
  function forget(key) {
    try {
      store.removeItem(key);
    } catch (e) {
      // Nothing to do: storage went away.
    }
  }

  /** Remove this exercise's drafts saved under another content version. */
  function pruneOtherVersions(draftKey) {
    const exercise = PREFIX + draftKey.slice(0, draftKey.lastIndexOf("@") + 1);
    const current = PREFIX + draftKey + ":";
    const stale = [];
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i);
      if (key && key.startsWith(exercise) && !key.startsWith(current)) stale.push(key);
    }
    stale.forEach(forget);
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** Replace the whole text, as an edit the browser can undo where it can. */
  function replaceAll(ta, text) {
    ta.focus();
    ta.setSelectionRange(0, ta.value.length);
    let done = false;
    try {
      done = text ? document.execCommand("insertText", false, text) : !ta.value || document.execCommand("delete");
    } catch (e) {
      done = false;
    }
    if (!done || ta.value !== text) {
      ta.value = text;
      ta.dispatchEvent(new Event("input", { bubbles: true }));
    }
    ta.setSelectionRange(0, 0);
    ta.scrollTop = 0;
  }

  function keep(ta) {
    const key = PREFIX + ta.dataset.draft + ":" + (ta.id || ta.name);
    let saved = ta.value; // what the server has: the last submission (or the starter before any)
    let base = ta.dataset.lastAttempt || ""; // the submission the editing started from
    let baseAt = Date.parse(ta.dataset.lastAt || "") || 0;
    let quiet = false; // our own edits (reset) write no draft

    // A row above the editor: the restored note, then the reset control. Above, so that Tab goes
    // from the editor straight on to its submit button.
    const tools = el("div", "code-tools");
    const note = el("p", "help draft-note");
    note.setAttribute("role", "status");
    const reset = el("details", "code-reset");
    const summary = el("summary", "", "Reset to starter");
    const explain = el(
      "p",
      "",
      "Replace the code in the editor with the starter code? What you have not submitted is discarded " +
        "(Ctrl+Z in the editor brings it back while you stay on this page); your submitted attempts are kept."
    );
    const confirm = el("button", "danger", "Yes, reset to the starter");
    confirm.type = "button";
    reset.append(summary, explain, confirm);
    tools.append(note, reset);
    (ta.closest(".code-editor") || ta).before(tools);

    const draft = store && read(key);
    if (draft) {
      if (draft.code !== saved && (draft.base === base || draft.at > baseAt)) {
        ta.value = draft.code;
        ta.dispatchEvent(new Event("input", { bubbles: true })); // the editor redraws
        const when = new Date(draft.at);
        note.textContent =
          "Restored your unsaved draft from " +
          when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) +
          (base ? " (newer than your last submission)." : ".");
      } else {
        forget(key); // nothing unsaved in it, or older than a submission made since
      }
    }

    ta.addEventListener("input", () => {
      if (quiet || !store) return;
      if (ta.value === saved) forget(key);
      else write(key, { code: ta.value, at: Date.now(), base: base });
    });

    ta.form.addEventListener("exercise:submitted", (event) => {
      const attempt = event.detail || {};
      const code = attempt.submitted && typeof attempt.submitted.code === "string" ? attempt.submitted.code : ta.value;
      saved = code;
      base = attempt.id ? String(attempt.id) : base;
      baseAt = Date.parse(attempt.created_at || "") || Date.now();
      ta.dataset.lastAttempt = base;
      if (store) {
        if (ta.value === saved) forget(key);
        else write(key, { code: ta.value, at: Date.now(), base: base }); // typed on while it went
      }
      note.textContent = "";
    });

    reset.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && reset.open) {
        event.preventDefault();
        reset.open = false;
        summary.focus();
      }
    });
    confirm.addEventListener("click", () => {
      quiet = true;
      try {
        replaceAll(ta, ta.dataset.starter || "");
      } finally {
        quiet = false;
      }
      if (store) forget(key);
      reset.open = false;
      note.textContent = "Reset to the starter code.";
    });
  }

  function start() {
    const editors = document.querySelectorAll("textarea[data-draft]");
    if (store && editors.length) pruneOtherVersions(editors[0].dataset.draft);
    for (const ta of editors) if (ta.form) keep(ta);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
