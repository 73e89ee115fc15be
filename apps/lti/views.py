"""The tool's endpoints (docs/lti.md): key set, OIDC login initiation, launch, deep linking
response, and the new-window continue link. Thin: pylti1p3 validates, services decide.

Launch pages are shown inside the LMS iframe, so they are frameable (the rest of the site sends
X-Frame-Options: DENY) and CSRF-exempt: the platform posts them cross-site, where our SameSite=Lax
session and CSRF cookies are not sent. What they post back is authenticated by signed tokens."""

from __future__ import annotations

import logging
from uuid import UUID

from django.contrib.auth import login as auth_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from lti_tool.models import Key
from pylti1p3.exception import LtiException, OIDCException

from apps.lti import platform, selectors, services
from apps.lti.csp import allow_form_post_to, framed_by_platforms
from apps.lti.exceptions import LaunchRefused

logger = logging.getLogger(__name__)

AUTH_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _refused(request: HttpRequest, error: LaunchRefused) -> HttpResponse:
    logger.info("lti refused", extra={"code": error.code})
    return render(request, "lti/error.html", {"error": error}, status=error.status)


# What pylti1p3's messages mean to the person in front of the LMS.
_LTI_ERRORS: list[tuple[tuple[str, ...], str, int, str]] = [
    (
        ("State not found", "Missing state param", "cookie"),
        "Your browser did not send back the cookie this launch needs (browsers often block cookies "
        "inside an LMS frame). Open the link from your course again; if that fails, allow cookies "
        "for this site or open the tool in a new window.",
        400,
        "state",
    ),
    (("Missing Roles Claim",), "The platform sent no role for you in this course.", 403, "no_role"),
    (("Invalid Nonce", '"nonce" is empty'), "This launch was not started here, or it expired.", 400, "nonce"),
    (("Signature has expired",), "The launch token has expired. Open the link from your course again.", 400, "expired"),
    (
        ("Invalid audience", "azp", "Invalid issuer"),
        "The launch token was meant for another tool.",
        400,
        "audience",
    ),
    (
        ("deployment",),
        "This deployment of the tool is not registered here (ask the site's administrator).",
        403,
        "deployment",
    ),
    (
        ("Registration not found", "Client id not registered", "Could not find registration"),
        "This platform or client id is not registered here: the launch token was meant for another tool, "
        "or the site's administrator has yet to register the platform.",
        403,
        "registration",
    ),
    (
        ("Signature verification failed", "Unable to find public key", "key set", "decode"),
        "The launch token's signature could not be verified.",
        400,
        "signature",
    ),
]


def _lti_error(request: HttpRequest, error: Exception) -> HttpResponse:
    detail = str(error)
    message, status, code = "The launch could not be verified.", 400, "invalid"
    for needles, known_message, known_status, known_code in _LTI_ERRORS:
        if any(n.lower() in detail.lower() for n in needles):
            message, status, code = known_message, known_status, known_code
            break
    refused = LaunchRefused(message, code=code, status=status)
    logger.info("lti launch invalid", extra={"code": code, "detail": detail[:300]})
    return render(request, "lti/error.html", {"error": refused, "detail": detail}, status=status)


@require_GET
def jwks(request: HttpRequest) -> JsonResponse:
    """The tool's public keys: platforms verify our deep linking responses and service tokens."""
    services.tool_key_ensure()
    response = JsonResponse(Key.objects.as_jwks())
    response["Cache-Control"] = "public, max-age=300"
    return response


@csrf_exempt
@xframe_options_exempt
@framed_by_platforms
@never_cache
@require_http_methods(["GET", "POST"])
def login(request: HttpRequest, registration_uuid: UUID | None = None) -> HttpResponse:
    """OIDC third-party login initiation: back to the platform's auth URL with a state (cookie)
    and a nonce. In an iframe that blocks cookies, pylti1p3's check page offers a new window."""
    params = request.POST if request.method == "POST" else request.GET
    if not params.get("target_link_uri") or not params.get("iss") or not params.get("login_hint"):
        return _refused(request, LaunchRefused("The login request is missing parameters.", code="bad_login"))
    services.tool_key_ensure()
    oidc = platform.oidc_login(request, str(registration_uuid) if registration_uuid else None)
    try:
        response: HttpResponse = oidc.enable_check_cookies(
            main_msg="Your browser blocks cookies inside this frame, so the tool must open in a new window.",
            click_msg="Open in a new window",
            loading_msg="Loading…",
        ).redirect(request.build_absolute_uri(reverse("lti:launch")))
    except (OIDCException, LtiException) as error:
        return _lti_error(request, error)
    return response


@csrf_exempt
@xframe_options_exempt
@framed_by_platforms
@never_cache
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    """The platform's signed id_token: validated (pylti1p3 and platform.ToolMessageLaunch), its
    nonce spent, then the user signed in. A resource link continues to its page (in a new window
    when framed); a deep linking request shows the content picker."""
    services.tool_key_ensure()
    try:
        message = platform.ToolMessageLaunch(request)
        message.validate()
        body = message.get_launch_data()
        services.launch_nonce_claim(issuer=str(body["iss"]), nonce=str(body["nonce"]))
        outcome = services.launch_accept(launch=message)
    except LaunchRefused as error:
        return _refused(request, error)
    except LtiException as error:
        return _lti_error(request, error)
    auth_login(request, outcome.user, backend=AUTH_BACKEND)
    if outcome.deep_link_token is not None:
        session = services.deep_link_session(token=outcome.deep_link_token)
        context = {
            "token": outcome.deep_link_token,
            "workbooks": selectors.pickable_workbooks(),
            "extras": selectors.deep_link_extras(user_id=outcome.user.pk, cohort_id=session.cohort_id),
            "multiple": session.accept_multiple,
        }
        return render(request, "lti/deep_link_picker.html", context)
    token = services.continue_token_create(user=outcome.user, landing=outcome.landing)
    context = {"landing": outcome.landing, "continue_url": reverse("lti:continue", kwargs={"token": token})}
    return render(request, "lti/launched.html", context)


@csrf_exempt  # posted from the LMS iframe; the signed, single-use picker token authenticates it
@xframe_options_exempt
@framed_by_platforms
@never_cache
@require_POST
def deep_link(request: HttpRequest) -> HttpResponse:
    try:
        response = services.deep_link_respond(
            token=request.POST.get("token", ""),
            choices=request.POST.getlist("item"),
            graded=request.POST.get("graded") == "on",
            launch_url=request.build_absolute_uri(reverse("lti:launch")),
        )
    except LaunchRefused as error:
        return _refused(request, error)
    page = render(request, "lti/deep_link_return.html", {"response": response})
    return allow_form_post_to(page, response.return_url)


@never_cache
@require_GET
def continue_(request: HttpRequest, token: str) -> HttpResponse:
    """A launch continued in a new window (first-party, so our cookies work): sign in, go on."""
    try:
        user, landing = services.continue_token_redeem(token=token)
    except LaunchRefused as error:
        return _refused(request, error)
    auth_login(request, user, backend=AUTH_BACKEND)
    return HttpResponseRedirect(landing)
