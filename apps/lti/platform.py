"""pylti1p3 glue: our tool configuration (no deployment is created by a launch), the message
launch with the checks we add (audience, azp, issuer, clock leeway, key rotation, static keys),
the LTI cookies (on /lti/ only), and an HTTP session with a timeout for calls to platforms.

Validation itself stays pylti1p3's: state, nonce presence, registration, signature, deployment,
message claims. What it does not do: the claims' types and shapes (claims.launch_claims, checked
here before pylti1p3's message validators or anything else reads them) and single-use nonces
(services.launch_nonce_claim)."""

from __future__ import annotations

import hashlib
from typing import Any

import jwt
import requests
from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from lti_tool.models import LtiDeployment, LtiRegistration
from lti_tool.utils import DjangoToolConfig
from pylti1p3.contrib.django.cookie import DjangoCookieService
from pylti1p3.contrib.django.launch_data_storage.cache import DjangoCacheDataStorage
from pylti1p3.contrib.django.message_launch import DjangoMessageLaunch
from pylti1p3.contrib.django.oidc_login import DjangoOIDCLogin
from pylti1p3.contrib.django.request import DjangoRequest
from pylti1p3.deployment import Deployment
from pylti1p3.exception import LtiException
from pylti1p3.registration import Registration

from apps.lti import claims, selectors
from apps.lti.models import StaticPlatformKey

COOKIE_PATH = "/lti/"


class TimeoutSession(requests.Session):
    """A requests session whose calls time out (pylti1p3 passes none)."""

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", settings.LTI_HTTP_TIMEOUT_S)
        return super().request(method, url, *args, **kwargs)


def http_session() -> requests.Session:
    session = TimeoutSession()
    session.headers["User-Agent"] = "mlsys-lti-tool"
    return session


def registration_for(lti_registration: LtiRegistration) -> Registration:
    """pylti1p3's registration, with the platform's static key when it has no key set URL."""
    reg: Registration = lti_registration.to_registration()
    static = StaticPlatformKey.objects.filter(registration=lti_registration).first()
    if static is not None:
        keyset: Any = {"keys": [dict(Registration.get_jwk(static.public_key))]}
        reg.set_key_set(keyset)
    return reg


class ToolConfig(DjangoToolConfig):
    """django-lti's configuration, except that an unknown or inactive deployment is refused
    (django-lti creates an inactive one on first sight)."""

    def find_registration_by_params(self, iss: str, client_id: str | None, *args: Any, **kwargs: Any) -> Any:
        lookups: dict[str, Any] = {"issuer": iss}
        if client_id:
            lookups["client_id"] = client_id
        if self.registration_uuid is not None:
            lookups["uuid"] = self.registration_uuid
        found = list(LtiRegistration.objects.active().filter(**lookups)[:2])
        if len(found) != 1:  # none, or several clients of one issuer and no client_id to choose
            return None
        self.registration = found[0]
        return registration_for(self.registration)

    def find_deployment_by_params(
        self, iss: str, deployment_id: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Deployment | None:
        self.deployment = LtiDeployment.objects.filter(
            registration=self.registration, deployment_id=deployment_id, is_active=True
        ).first()
        if self.deployment is None:
            return None
        return Deployment().set_deployment_id(deployment_id)

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment | None:
        return self.find_deployment_by_params(iss, deployment_id, "")


class LtiCookieService(DjangoCookieService):
    """pylti1p3's state cookies on the LTI path only, and ``SameSite=None; Secure`` over HTTPS so
    they come back with the platform's cross-site form post into the LMS iframe. The site's own
    session and CSRF cookies keep their settings (Lax)."""

    def update_response(self, response: HttpResponse) -> None:
        assert self._request is not None
        secure = self._request.is_secure()
        for key, data in self._cookie_data_to_set.items():
            response.set_cookie(
                key,
                data["value"],
                max_age=data["exp"],
                path=COOKIE_PATH,
                secure=secure,
                httponly=True,
                samesite="None" if secure else "Lax",
            )


def launch_storage() -> DjangoCacheDataStorage:
    return DjangoCacheDataStorage(cache_name="default")


# What pylti1p3's cookie check page passes on to the login it reloads (OIDCLogin.get_cookies_allowed_js_check).
_LOGIN_PARAMS = ("iss", "login_hint", "target_link_uri", "lti_message_hint", "lti_deployment_id", "client_id")


class ToolOIDCLogin(DjangoOIDCLogin):
    """pylti1p3's login, with its cookie check page rendered by our template and static script:
    pylti1p3's own page is inline script and style, which our CSP forbids."""

    def get_cookies_allowed_js_check(self) -> str:
        params = {"lti1p3_new_window": "1"}
        for key in (*_LOGIN_PARAMS, *self.get_additional_login_params()):
            value = self._get_request_param(key)
            if value:
                params[key] = str(value)
        context = {
            "params": params,
            "secure": self._request.is_secure(),
            "main_text": self._cookies_unavailable_msg_main_text,
            "click_text": self._cookies_unavailable_msg_click_text,
            "loading_text": self._cookies_check_loading_text,
        }
        return render_to_string("lti/cookie_check.html", context)


def oidc_login(request: HttpRequest, registration_uuid: str | None) -> DjangoOIDCLogin:
    lti_request = DjangoRequest(request)
    return ToolOIDCLogin(
        lti_request,
        ToolConfig(registration_uuid),
        cookie_service=LtiCookieService(lti_request),
        launch_data_storage=launch_storage(),
    )


class ToolMessageLaunch(DjangoMessageLaunch):
    """pylti1p3's launch, stricter: the signature check also verifies ``aud`` (our client id),
    ``azp``, ``iss``, ``exp``/``iat``/``nbf`` with a small leeway, and the key set is cached and
    refetched once when a token names a key id it does not hold (the platform rotated keys)."""

    _refetch = False
    _claims: claims.LaunchClaims | None = None

    def __init__(self, request: HttpRequest) -> None:
        lti_request = DjangoRequest(request, post_only=True)
        super().__init__(
            lti_request,
            ToolConfig(),
            cookie_service=LtiCookieService(lti_request),
            launch_data_storage=launch_storage(),
            requests_session=http_session(),
        )

    @property
    def lti_registration(self) -> LtiRegistration:
        registration: LtiRegistration = self._tool_config.registration
        return registration

    @property
    def lti_deployment(self) -> LtiDeployment:
        deployment: LtiDeployment = self._tool_config.deployment
        return deployment

    @property
    def claims(self) -> claims.LaunchClaims:
        """The launch's claims, checked (after ``validate``)."""
        assert self._claims is not None, "validate() checks the claims"
        return self._claims

    def validate_message(self) -> ToolMessageLaunch:
        """The claims' types and shapes first (a LaunchRefused naming a bad one), then pylti1p3's
        message validators, which assume objects where the spec puts them."""
        hosts = selectors.platform_hosts(registration=self.lti_registration)
        self._claims = claims.launch_claims(dict(self._get_jwt_body()), hosts=hosts)
        super().validate_message()
        return self

    def fetch_public_key(self, key_set_url: str) -> Any:
        key = "lti:keyset:" + hashlib.sha256(key_set_url.encode()).hexdigest()
        if not self._refetch:
            cached = cache.get(key)
            if cached:
                return cached
        try:
            response = self._requests_session.get(key_set_url)
            response.raise_for_status()
            keyset = response.json()
        except (requests.RequestException, ValueError) as error:
            raise LtiException(f"The platform's key set could not be fetched from {key_set_url}.") from error
        cache.set(key, keyset, settings.LTI_KEYSET_CACHE_S)
        return keyset

    def get_public_key(self) -> tuple[str, str]:
        static = self._static_key()
        if static is not None:
            return static, "RS256"
        try:
            found: tuple[str, str] = super().get_public_key()
            return found
        except LtiException as error:
            if "Unable to find public key" not in str(error) or self._refetch:
                raise
            # A kid we have not seen: the platform may have rotated its keys. Refetch, at most
            # once a minute per key set (a forged kid must not make us hammer the platform).
            registration = self._platform_registration()
            url = registration.get_key_set_url() or ""
            if not cache.add("lti:keyset-refetch:" + hashlib.sha256(url.encode()).hexdigest(), 1, 60):
                raise
            self._refetch = True
            registration.set_key_set(None)
            refetched: tuple[str, str] = super().get_public_key()
            return refetched

    def _platform_registration(self) -> Registration:
        assert self._registration is not None, "validate_registration runs before the signature check"
        return self._registration

    def _static_key(self) -> str | None:
        static = StaticPlatformKey.objects.filter(registration=self.lti_registration).first()
        return static.public_key if static is not None else None

    def validate_jwt_signature(self) -> ToolMessageLaunch:
        id_token = self._get_id_token()
        public_key, alg = self.get_public_key()
        registration = self._platform_registration()
        client_id = registration.get_client_id()
        try:
            body = jwt.decode(
                id_token,
                public_key,
                algorithms=[alg],
                audience=client_id,
                issuer=registration.get_issuer(),
                leeway=settings.LTI_JWT_LEEWAY_S,
                options={"require": ["exp", "iat", "iss", "aud", "nonce"]},
            )
        except jwt.InvalidTokenError as error:
            raise LtiException(f"Can't decode id_token: {error}") from error
        aud = body["aud"]
        azp = body.get("azp")
        if (isinstance(aud, list) and len(aud) > 1 and azp is None) or (azp is not None and azp != client_id):
            raise LtiException("Can't decode id_token: the authorized party (azp) is not this tool")
        return self
