// The site header's menu on a phone (templates/base.html). Loaded without `defer`, right after
// the header, so the header is folded before the first paint; if this file never runs, the
// header keeps every link visible and wraps instead. A disclosure button (aria-expanded); Escape
// closes it and gives the focus back to the button.
(function () {
  "use strict";
  const header = document.querySelector("header.site");
  const button = header && header.querySelector(".menu-toggle");
  const menu = button && document.getElementById(button.getAttribute("aria-controls"));
  if (!menu) return;

  function setOpen(open) {
    button.setAttribute("aria-expanded", String(open));
    menu.classList.toggle("is-open", open);
  }

  header.classList.add("has-menu");
  button.hidden = false;
  button.addEventListener("click", function () {
    setOpen(button.getAttribute("aria-expanded") !== "true");
  });
  header.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
      setOpen(false);
      button.focus();
    }
  });
})();
