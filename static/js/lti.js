// The LTI pages' steps, out of the templates so the CSP can forbid inline script.
// templates/lti/cookie_check.html: the OIDC login in the LMS frame checks that cookies work.
// templates/lti/launched.html: outside an LMS frame, go straight on to the landing page.
// templates/lti/deep_link_return.html: post the signed deep-linking response back to the platform.
(function () {
  "use strict";

  const check = document.getElementById("lti-cookie-check");
  if (check) {
    const params = JSON.parse(document.getElementById("lti-cookie-params").textContent);
    // The same login (path and query) with the parameters it was posted with.
    const url = new URL(window.location.pathname + window.location.search, window.location.origin);
    for (const [key, value] of Object.entries(params)) {
      if (!url.searchParams.has(key)) url.searchParams.set(key, String(value));
    }
    let cookie = "lti1p3_test_cookie=1; path=/";
    if (check.dataset.secure === "1") cookie += "; SameSite=None; secure";
    document.cookie = cookie;
    if (document.cookie.indexOf("lti1p3_test_cookie") !== -1) {
      document.cookie = "lti1p3_test_cookie=1; path=/; expires=Thu, 01-Jan-1970 00:00:01 GMT";
      document.getElementById("lti-cookie-loading").hidden = false;
      window.location.href = url.toString();
    } else {
      const link = document.getElementById("lti-cookie-new-window");
      link.href = url.toString();
      link.addEventListener("click", () => link.remove());
      document.getElementById("lti-cookie-warning").hidden = false;
    }
  }

  const landing = document.getElementById("lti-landing");
  // Only a path on this site: the page never sends the browser anywhere else.
  if (landing && window.top === window.self && /^\/(?!\/)/.test(landing.dataset.href || "")) {
    window.location.replace(landing.dataset.href);
  }

  const back = document.getElementById("lti-deep-link-return");
  if (back) back.submit();
})();
