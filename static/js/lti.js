// The LTI pages' two steps, out of the templates so the CSP can forbid inline script.
// templates/lti/launched.html: outside an LMS frame, go straight on to the landing page.
// templates/lti/deep_link_return.html: post the signed deep-linking response back to the platform.
(function () {
  "use strict";
  const landing = document.getElementById("lti-landing");
  // Only a path on this site: the page never sends the browser anywhere else.
  if (landing && window.top === window.self && /^\/(?!\/)/.test(landing.dataset.href || "")) {
    window.location.replace(landing.dataset.href);
  }
  const back = document.getElementById("lti-deep-link-return");
  if (back) back.submit();
})();
