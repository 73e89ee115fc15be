// Dev mode only (make content-dev, never in production): poll the content status and reload this
// page when its token moves (a content file was synced, or an error appeared or went away).
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var url = script.getAttribute("data-status");
  var token = script.getAttribute("data-token");
  var posted = script.getAttribute("data-method") === "POST";
  var EVERY_MS = 250;

  function reload() {
    // A page answering a POST is reloaded as a GET of its address, never by submitting again.
    if (posted) window.location.replace(window.location.pathname + window.location.search);
    else window.location.reload();
  }

  function poll() {
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (status) {
        if (status && status.token !== token) { reload(); return; }
        window.setTimeout(poll, EVERY_MS);
      }, function () { window.setTimeout(poll, 4 * EVERY_MS); });  // the server restarting: wait a little longer
  }
  window.setTimeout(poll, EVERY_MS);
})();
