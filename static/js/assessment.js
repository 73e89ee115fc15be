// The time left on an assessment page (templates/assessments/assessment.html). The server computed
// the seconds (data-seconds) from the learner's deadline; this only counts them down on screen.
// A screen reader hears the minutes (an aria-live region changed at most once a minute); at zero
// the page reloads, so that the server shows it closed. The server refuses a late answer whatever
// this shows.
(function () {
  "use strict";
  const timer = document.getElementById("timer");
  if (!timer) return;
  const clock = timer.querySelector(".clock");
  const live = document.getElementById("timer-live");
  const end = Date.now() + Number(timer.dataset.seconds || "0") * 1000;
  let lastMinutes = null;

  function pad(n) {
    return String(n).padStart(2, "0");
  }

  function tick() {
    const left = Math.max(0, Math.round((end - Date.now()) / 1000));
    const h = Math.floor(left / 3600);
    const m = Math.floor((left % 3600) / 60);
    const s = left % 60;
    clock.textContent = h ? h + ":" + pad(m) + ":" + pad(s) : m + ":" + pad(s);
    const minutes = Math.ceil(left / 60);
    if (minutes !== lastMinutes) {
      if (lastMinutes !== null) live.textContent = minutes === 1 ? "1 minute left" : minutes + " minutes left";
      lastMinutes = minutes;
    }
    timer.classList.toggle("is-low", left <= 60);
    if (left === 0) {
      timer.classList.add("is-over");
      clock.textContent = "0:00";
      live.textContent = "Time is up.";
      window.clearInterval(handle);
      // One more second: the server's clock decides, and a reload a moment after zero finds it closed.
      window.setTimeout(function () {
        window.location.reload();
      }, 1500);
    }
  }

  const handle = window.setInterval(tick, 1000);
  tick();
})();
