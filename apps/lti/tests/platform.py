"""A test LTI 1.3 platform of our own, on a live HTTP server: it signs id_tokens with its RSA key
(published as its JWKS), verifies the tool's client-assertion JWTs against the tool's JWKS before
issuing access tokens, records AGS line items and scores, and serves an NRPS roster the test sets."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS_CLAIM = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
DL_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#"
INSTRUCTOR = [ROLE + "Instructor"]
LEARNER = [ROLE + "Learner"]
AGS_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
]


class RSAKey:
    def __init__(self, kid: str) -> None:
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private_pem = self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self.public_pem = (
            self.private.public_key()
            .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
            .decode()
        )

    def jwk(self) -> dict[str, Any]:
        data = json.loads(RSAAlgorithm.to_jwk(self.private.public_key()))
        return {**data, "kid": self.kid, "alg": "RS256", "use": "sig"}


class TestPlatform:
    __test__ = False  # not a test class
    client_id = "tool-client-1"
    deployment_id = "deployment-1"

    def __init__(self) -> None:
        self.keys = [RSAKey("platform-key-1")]
        self.tool_jwks: dict[str, Any] = {"keys": []}
        self.scores: list[tuple[str, dict[str, Any]]] = []  # (line item URL, score)
        self.lineitems: list[dict[str, Any]] = []
        self.roster: list[dict[str, Any]] = []
        self.token_requests: list[dict[str, Any]] = []
        self.jwks_fetches = 0
        self.fail_scores = 0  # answer this many score posts with a 503
        # Line items: the queries the tool made (GET /lineitems?…), an optional delay before one is
        # created (to let two creators race), and, as LMSs do, line items made from the deep linking
        # responses' content items that carry a lineItem (``placed``: their custom and line item URL).
        self.lineitem_queries: list[dict[str, str]] = []
        self.lineitem_create_delay_s = 0.0
        self.lineitems_from_deep_linking = False
        self.placed: list[dict[str, Any]] = []
        # The browser side (tests/e2e): the tool's address, what /auth signs for the next launch,
        # and the deep linking responses the LMS received.
        self.tool_url = "http://testserver"
        self.browser_launch: dict[str, Any] = {"roles": LEARNER}
        self.deep_link_responses: list[str] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.issuer = self.base

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- URLs the tool is configured with ---
    @property
    def auth_url(self) -> str:
        return self.base + "/auth"

    @property
    def token_url(self) -> str:
        return self.base + "/token"

    @property
    def jwks_url(self) -> str:
        return self.base + "/jwks"

    def registration(self) -> dict[str, Any]:
        """What an administrator registers the platform with (services.platform_register)."""
        return {
            "issuer": self.issuer,
            "client_id": self.client_id,
            "deployment_ids": [self.deployment_id],
            "auth_login_url": self.auth_url,
            "auth_token_url": self.token_url,
            "keyset_url": self.jwks_url,
        }

    # --- id_tokens ---
    def claims(
        self,
        *,
        nonce: str,
        sub: str,
        roles: list[str],
        message_type: str = "LtiResourceLinkRequest",
        context_id: str = "course-1",
        context_title: str = "Systems 101",
        resource_link_id: str = "link-1",
        custom: dict[str, str] | None = None,
        ags: bool = True,
        lineitem: str | None = None,
        name: str = "Ada Lovelace",
        email: str = "ada@example.org",
    ) -> dict[str, Any]:
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id,
            "azp": self.client_id,
            "sub": sub,
            "exp": now + 300,
            "iat": now,
            "nonce": nonce,
            "name": name,
            "given_name": name.split()[0],
            "family_name": name.split()[-1],
            "email": email,
            CLAIM + "deployment_id": self.deployment_id,
            CLAIM + "message_type": message_type,
            CLAIM + "version": "1.3.0",
            CLAIM + "roles": roles,
            CLAIM + "context": {"id": context_id, "title": context_title, "label": "SYS101"},
            CLAIM + "target_link_uri": "http://testserver/lti/launch/",
            NRPS_CLAIM: {"context_memberships_url": self.base + "/memberships", "service_versions": ["2.0"]},
        }
        if message_type == "LtiResourceLinkRequest":
            body[CLAIM + "resource_link"] = {"id": resource_link_id, "title": "A link"}
            if custom:
                body[CLAIM + "custom"] = custom
            if ags:
                ags_claim: dict[str, Any] = {"scope": AGS_SCOPES, "lineitems": self.base + "/lineitems"}
                if lineitem:
                    ags_claim["lineitem"] = lineitem
                body[AGS_CLAIM] = ags_claim
        else:
            body[DL_SETTINGS] = {
                "deep_link_return_url": self.base + "/deep-link-return",
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": True,
                "data": "platform-opaque-data",
            }
        return body

    def sign(self, body: dict[str, Any], key: RSAKey | None = None) -> str:
        key = key or self.keys[0]
        return jwt.encode(body, key.private_pem, algorithm="RS256", headers={"kid": key.kid})

    def place(self, encoded: str) -> None:
        """What an LMS does with a deep linking response: a resource link per content item and,
        for one with a lineItem, a line item bound to it (its resourceId, label, scoreMaximum)."""
        items = jwt.decode(encoded, options={"verify_signature": False}).get(
            "https://purl.imsglobal.org/spec/lti-dl/claim/content_items", []
        )
        for item in items:
            link_id = f"placed-{len(self.placed) + 1}"
            lineitem = None
            if "lineItem" in item:
                lineitem = self.lineitem_add(item["lineItem"].get("label", item.get("title", "")))
                self.lineitems[-1].update(item["lineItem"])
                self.lineitems[-1]["resourceLinkId"] = link_id
            self.placed.append({"resource_link_id": link_id, "custom": item.get("custom", {}), "lineitem": lineitem})

    def lineitem_add(self, label: str = "Existing") -> str:
        url = f"{self.base}/lineitems/{len(self.lineitems) + 1}"
        self.lineitems.append({"id": url, "label": label, "scoreMaximum": 100})
        return url

    # --- the HTTP side ---
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                pass

            def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _html(self, html: str) -> None:
                data = html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _authorized(self) -> bool:
                header = self.headers.get("Authorization", "")
                issued = {r["access_token"] for r in platform.token_requests}
                if not header.startswith("Bearer ") or header[7:] not in issued:
                    self._send(401, {"error": "unauthorized"})
                    return False
                return True

            def do_GET(self) -> None:
                path = urlparse(self.path).path
                query = {k: v[0] for k, v in parse_qs(urlparse(self.path).query).items()}
                if path == "/course":  # the LMS's course page: the tool in an iframe, as LMSs place it
                    login = (
                        platform.tool_url
                        + "/lti/login/?"
                        + urlencode(
                            {
                                "iss": platform.issuer,
                                "login_hint": query.get("sub", "learner-1"),
                                "target_link_uri": platform.tool_url + "/lti/launch/",
                                "client_id": platform.client_id,
                                "lti_deployment_id": platform.deployment_id,
                            }
                        )
                    )
                    self._html(
                        f'<!doctype html><title>Course</title><h1>Systems 101</h1><iframe id="tool" src="{escape(login)}" width="900" height="600"></iframe>'
                    )
                elif path == "/auth":  # OIDC authorization: sign an id_token, post it to the tool
                    body = platform.claims(nonce=query["nonce"], sub=query["login_hint"], **platform.browser_launch)
                    body[CLAIM + "target_link_uri"] = query["redirect_uri"]
                    self._html(
                        f'<!doctype html><form method="post" action="{escape(query["redirect_uri"])}">'
                        f'<input type="hidden" name="id_token" value="{platform.sign(body)}">'
                        f'<input type="hidden" name="state" value="{escape(query["state"])}"></form>'
                        "<script>document.forms[0].submit()</script>"
                    )
                elif path == "/jwks":
                    platform.jwks_fetches += 1
                    self._send(200, {"keys": [k.jwk() for k in platform.keys]})
                elif path == "/lineitems":
                    if self._authorized():
                        platform.lineitem_queries.append(query)
                        items = platform.lineitems
                        if "resource_id" in query:  # AGS's filter
                            items = [i for i in items if i.get("resourceId") == query["resource_id"]]
                        self._send(200, items, "application/vnd.ims.lis.v2.lineitemcontainer+json")
                elif path == "/memberships":
                    if self._authorized():
                        body = {
                            "id": platform.base + "/memberships",
                            "context": {"id": "course-1"},
                            "members": platform.roster,
                        }
                        self._send(200, body, "application/vnd.ims.lti-nrps.v2.membershipcontainer+json")
                else:
                    self._send(404, {})

            def do_POST(self) -> None:
                path = urlparse(self.path).path
                raw = self._body()
                if path == "/token":
                    form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    try:
                        claims = platform.verify_client_assertion(form)
                    except (jwt.InvalidTokenError, KeyError, ValueError) as error:
                        self._send(400, {"error": "invalid_client", "detail": str(error)})
                        return
                    token = uuid.uuid4().hex
                    platform.token_requests.append(
                        {"claims": claims, "scope": form.get("scope", ""), "access_token": token}
                    )
                    self._send(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})
                elif path == "/lineitems":
                    if self._authorized():
                        item = json.loads(raw)
                        time.sleep(platform.lineitem_create_delay_s)
                        with platform.lock:
                            item["id"] = f"{platform.base}/lineitems/{len(platform.lineitems) + 1}"
                            platform.lineitems.append(item)
                        self._send(201, item, "application/vnd.ims.lis.v2.lineitem+json")
                elif path == "/deep-link-return":
                    form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
                    platform.deep_link_responses.append(form.get("JWT", ""))
                    if platform.lineitems_from_deep_linking:
                        platform.place(form.get("JWT", ""))
                    self._html("<!doctype html><title>Added</title><p id=added>Content added to the course.</p>")
                elif re.fullmatch(r"/lineitems/\d+/scores", path):
                    if not self._authorized():
                        return
                    if platform.fail_scores > 0:
                        platform.fail_scores -= 1
                        self._send(503, {"error": "busy"})
                        return
                    assert self.headers.get("Content-Type") == "application/vnd.ims.lis.v1.score+json"
                    platform.scores.append((platform.base + path.removesuffix("/scores"), json.loads(raw)))
                    self._send(200, {})
                else:
                    self._send(404, {})

        return Handler

    def verify_client_assertion(self, form: dict[str, str]) -> dict[str, Any]:
        """OAuth2 client credentials with a JWT client assertion, verified with the tool's JWKS."""
        if form.get("grant_type") != "client_credentials":
            raise ValueError("grant_type")
        if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            raise ValueError("client_assertion_type")
        assertion = form["client_assertion"]
        kid = jwt.get_unverified_header(assertion)["kid"]
        jwk = next(k for k in self.tool_jwks["keys"] if k["kid"] == kid)
        key = RSAAlgorithm.from_jwk(json.dumps(jwk))
        assert isinstance(key, rsa.RSAPublicKey)
        claims: dict[str, Any] = jwt.decode(
            assertion,
            key,
            algorithms=["RS256"],
            audience=self.token_url,
            options={"require": ["exp", "iat", "jti"]},
        )
        if claims["iss"] != self.client_id or claims["sub"] != self.client_id:
            raise ValueError("client")
        return claims
