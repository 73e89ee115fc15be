// Reorderable steps for Design exercises (templates/exercises/widgets/order.html).
//
// Without JavaScript each step has a "Position" select and the form posts `pos:<id>` = 1..n.
// With it, the selects are hidden and kept in sync with a list the learner reorders by dragging
// a step's handle (Pointer Events, so mouse, touch and pen alike), with its "Move up" / "Move
// down" buttons, or with the arrow keys on its handle (Alt+arrows anywhere in the step). Every
// move is announced in a polite live region ("Moved to position 3 of 6") and fires an
// `order:change` event on the list; the `pos:` selects are always a permutation of 1..n.
//
// Public hook: window.orderWidget = { markWrong(position), clear(), order() } for the first
// enhanced list, so the grader's `details.first_misplaced` (1-based) can be shown on its step.
(function () {
  "use strict";

  const reduceMotion = () => window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function shorten(text, max) {
    text = text.replace(/\s+/g, " ").trim();
    return text.length > max ? text.slice(0, max - 1).trimEnd() + "…" : text;
  }

  function enhance(list) {
    if (list.dataset.orderReady) return null;
    const items = Array.from(list.children).filter((li) => li.matches("li.step"));
    const selects = items.map((li) => li.querySelector('select[name^="pos:"]'));
    if (!items.length || selects.some((s) => !s)) return null;
    list.dataset.orderReady = "true";
    list.classList.add("is-enhanced");
    list.setAttribute("role", "list"); // list-style: none would drop list semantics in Safari

    const n = items.length;
    const parts = new Map(); // li -> its select, badge, buttons and short text

    // Start from the positions the selects hold, when they are a permutation (a restored form);
    // otherwise from the order on the page.
    const values = selects.map((s) => Number(s.value));
    if (values.slice().sort((x, y) => x - y).every((v, i) => v === i + 1)) {
      items.slice().sort((x, y) => values[items.indexOf(x)] - values[items.indexOf(y)]).forEach((li) => list.append(li));
    }

    const fieldset = list.closest("fieldset");
    for (const node of (fieldset || list).querySelectorAll("[data-order-nojs]")) node.hidden = true;
    const help = el("p", "help order-help",
      "Drag a step by its handle, or use its Move up and Move down buttons. On a handle, the up and down arrow keys move the step too.");
    help.id = (list.id || "steps") + "-help";
    list.before(help);
    const live = el("p", "sr-only");
    live.setAttribute("role", "status");
    live.setAttribute("aria-live", "polite");
    live.setAttribute("aria-atomic", "true");
    list.after(live);

    for (const li of items) {
      const select = li.querySelector('select[name^="pos:"]');
      const label = select.closest("label") || select;
      label.hidden = true; // still submitted with the form; only the JS controls are shown
      const prose = li.querySelector(".prose");
      const text = shorten((prose || li).textContent, 60);

      const badge = el("span", "step-num");
      badge.setAttribute("aria-hidden", "true"); // the buttons' names carry the position
      const handle = el("button", "step-handle");
      handle.type = "button";
      handle.setAttribute("aria-describedby", help.id);
      handle.append(el("span", "step-grip", "⠿"));
      handle.firstChild.setAttribute("aria-hidden", "true");
      const bodyBox = el("div", "step-body");
      if (prose) bodyBox.append(prose);
      const moves = el("span", "step-moves");
      const up = el("button", "step-move step-up", "↑");
      const down = el("button", "step-move step-down", "↓");
      up.type = down.type = "button";
      moves.append(up, down);
      li.prepend(badge, handle, bodyBox);
      li.append(moves);
      parts.set(li, { select, badge, handle, up, down, text });

      up.addEventListener("click", () => moveBy(li, -1, up));
      down.addEventListener("click", () => moveBy(li, 1, down));
      handle.addEventListener("keydown", (e) => {
        if (drag) { if (e.key === "Escape") { e.preventDefault(); endDrag(false); } return; }
        if (e.ctrlKey || e.metaKey || e.shiftKey) return;
        const to = { ArrowUp: index(li) - 1, ArrowDown: index(li) + 1, Home: 0, End: n - 1 }[e.key];
        if (to === undefined) return;
        e.preventDefault();
        moveTo(li, to, handle);
      });
      li.addEventListener("keydown", (e) => {
        // Alt+ArrowUp/Down from any control of the step (the handle handles them itself).
        if (!e.altKey || e.target === handle || (e.key !== "ArrowUp" && e.key !== "ArrowDown")) return;
        e.preventDefault();
        moveBy(li, e.key === "ArrowUp" ? -1 : 1, e.target.closest("button") || handle);
      });
      handle.addEventListener("pointerdown", (e) => startDrag(e, li));
    }

    const current = () => Array.from(list.children).filter((li) => parts.has(li));
    const index = (li) => current().indexOf(li);

    /** Selects, badges and accessible names follow the order on the page. */
    function sync() {
      current().forEach((li, i) => {
        const p = parts.get(li);
        const pos = i + 1;
        p.select.value = String(pos);
        p.badge.textContent = String(pos);
        p.handle.setAttribute("aria-label", "Reorder step " + pos + " of " + n + ": " + p.text);
        p.up.setAttribute("aria-label", "Move step " + pos + " up");
        p.down.setAttribute("aria-label", "Move step " + pos + " down");
        // aria-disabled, not disabled: a disabled button would drop the focus the learner is on.
        p.up.setAttribute("aria-disabled", String(pos === 1));
        p.down.setAttribute("aria-disabled", String(pos === n));
      });
    }

    let toggle = false;
    function announce(message) {
      // A no-break space alternates so that the same message twice is still read out twice.
      toggle = !toggle;
      live.textContent = message + (toggle ? "\u00a0" : "");
    }

    function changed(li, from) {
      sync();
      const to = index(li);
      announce(to === from ? "Still at position " + (to + 1) + " of " + n : "Moved to position " + (to + 1) + " of " + n);
      if (to !== from) {
        list.dispatchEvent(new CustomEvent("order:change", {
          bubbles: true,
          detail: { order: current().map((x) => x.dataset.id), id: li.dataset.id, from: from + 1, to: to + 1 },
        }));
      }
    }

    /** Put li at `to` (0-based), animating the steps that shift. The steps it passes are moved
     *  rather than li itself, so li never leaves the document: it keeps the focus and the
     *  pointer capture of a drag in progress. */
    function place(li, to, skip) {
      const items = current();
      const from = items.indexOf(li);
      if (to === from) return;
      const before = new Map(items.map((x) => [x, x.offsetTop]));
      if (to > from) for (let k = from + 1; k <= to; k++) list.insertBefore(items[k], li);
      else for (let k = from - 1; k >= to; k--) li.after(items[k]);
      if (reduceMotion()) return;
      for (const [x, top] of before) {
        const dy = top - x.offsetTop;
        if (dy && x !== skip) x.animate([{ transform: "translateY(" + dy + "px)" }, { transform: "none" }], { duration: 150, easing: "ease-out" });
      }
    }

    function moveTo(li, to, focusTarget) {
      const from = index(li);
      to = Math.max(0, Math.min(n - 1, to));
      place(li, to, null);
      if (document.activeElement !== focusTarget) focusTarget.focus();
      changed(li, from);
    }
    const moveBy = (li, delta, focusTarget) => moveTo(li, index(li) + delta, focusTarget);

    // ----- Dragging with Pointer Events --------------------------------------------------------
    // The dragged step follows the pointer with a transform; whenever its middle passes a
    // neighbour's middle it is moved past that neighbour in the DOM (the others reflow), and its
    // transform is corrected by how far its layout box moved, so it stays under the pointer.
    let drag = null;

    function startDrag(e, li) {
      if (drag || e.button !== 0 || !e.isPrimary) return;
      const handle = parts.get(li).handle;
      e.preventDefault(); // no text selection, no emulated mouse events
      handle.focus({ preventScroll: true });
      handle.setPointerCapture(e.pointerId);
      drag = { li, handle, pointerId: e.pointerId, from: index(li), baseY: e.pageY, clientY: e.clientY, offset: 0, frame: 0 };
      li.classList.add("is-dragging");
      list.classList.add("is-sorting");
      handle.addEventListener("pointermove", onMove);
      handle.addEventListener("pointerup", onUp);
      handle.addEventListener("pointercancel", onCancel);
      handle.addEventListener("lostpointercapture", onUp);
      drag.frame = requestAnimationFrame(autoScroll);
    }

    function onMove(e) {
      if (!drag || e.pointerId !== drag.pointerId) return;
      drag.clientY = e.clientY;
      follow();
    }
    function onUp(e) { if (drag && e.pointerId === drag.pointerId) endDrag(true); }
    function onCancel(e) { if (drag && e.pointerId === drag.pointerId) endDrag(false); }

    function follow() {
      const { li } = drag;
      const pageY = drag.clientY + window.scrollY;
      // Keep the step within the list, give or take half its height (so its middle can pass
      // the first or last step's middle).
      const limit = (y) => Math.max(-li.offsetTop - li.offsetHeight / 2, Math.min(list.clientHeight - li.offsetTop - li.offsetHeight / 2, y));
      let t = limit(pageY - drag.baseY);
      const middle = li.offsetTop + t + li.offsetHeight / 2;
      const items = current();
      const i = items.indexOf(li);
      let to = i;
      while (to < items.length - 1 && middle > items[to + 1].offsetTop + items[to + 1].offsetHeight / 2) to++;
      if (to === i) while (to > 0 && middle < items[to - 1].offsetTop + items[to - 1].offsetHeight / 2) to--;
      if (to !== i) {
        const top = li.offsetTop;
        place(li, to, li);
        drag.baseY += li.offsetTop - top;
        t = limit(pageY - drag.baseY);
        sync(); // badges follow live; the announcement waits for the drop
      }
      drag.offset = t;
      li.style.transform = "translateY(" + t + "px)";
    }

    function autoScroll() {
      // Near the top or bottom of the viewport, scroll so long lists can be dragged on phones.
      if (!drag) return;
      const edge = 48;
      const y = drag.clientY;
      const speed = y < edge ? -(edge - y) / 4 : y > window.innerHeight - edge ? (y - (window.innerHeight - edge)) / 4 : 0;
      if (speed) { window.scrollBy(0, speed); follow(); }
      drag.frame = requestAnimationFrame(autoScroll);
    }

    function endDrag(commit) {
      const { li, handle, pointerId, from, offset, frame } = drag;
      drag = null;
      cancelAnimationFrame(frame);
      handle.removeEventListener("pointermove", onMove);
      handle.removeEventListener("pointerup", onUp);
      handle.removeEventListener("pointercancel", onCancel);
      handle.removeEventListener("lostpointercapture", onUp);
      if (handle.hasPointerCapture(pointerId)) handle.releasePointerCapture(pointerId);
      const top = li.offsetTop;
      if (!commit) place(li, from, li);
      li.style.transform = "";
      li.classList.remove("is-dragging");
      list.classList.remove("is-sorting");
      const settle = top + offset - li.offsetTop; // from where it was dropped to its slot
      if (settle && !reduceMotion()) li.animate([{ transform: "translateY(" + settle + "px)" }, { transform: "none" }], { duration: 120, easing: "ease-out" });
      handle.focus({ preventScroll: true });
      if (commit) changed(li, from);
      else { sync(); announce("Move cancelled; back at position " + (from + 1) + " of " + n); }
    }

    sync();

    // ----- Grader feedback ----------------------------------------------------------------------
    let flagged = null;
    const api = {
      /** Flag the step at a 1-based position as the first misplaced one; false if there is none. */
      markWrong(position) {
        api.clear();
        const li = current()[Number(position) - 1];
        if (!li) return false;
        const flag = el("span", "step-flag", "First misplaced step");
        li.classList.add("is-misplaced");
        li.querySelector(".step-body").append(flag);
        flagged = { li, flag };
        return true;
      },
      /** Remove the flag. */
      clear() {
        if (!flagged) return;
        flagged.li.classList.remove("is-misplaced");
        flagged.flag.remove();
        flagged = null;
      },
      /** The step ids in their current order. */
      order: () => current().map((li) => li.dataset.id),
    };
    return api;
  }

  function start() {
    for (const list of document.querySelectorAll("ol.steps")) {
      const api = enhance(list);
      if (api && !window.orderWidget) window.orderWidget = api;
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
