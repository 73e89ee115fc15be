from __future__ import annotations

from io import StringIO
from pathlib import Path

from django.core.management import call_command
from django.test import Client
from lti_tool.models import Key, LtiDeployment, LtiRegistration

from apps.accounts.models import User
from apps.lti.models import StaticPlatformKey
from apps.lti.tests.conftest import Lms
from apps.lti.tests.platform import INSTRUCTOR, RSAKey, TestPlatform


def test_register_platform_is_idempotent_and_prints_the_tool_urls(db: None) -> None:
    args = ["--issuer", "https://lms.example.edu", "--client-id", "abc", "--deployment-id", "d1",
            "--auth-login-url", "https://lms.example.edu/auth", "--auth-token-url", "https://lms.example.edu/token",
            "--keyset-url", "https://lms.example.edu/jwks", "--base-url", "https://tool.example.org"]  # fmt: skip
    out = StringIO()
    call_command("lti_register_platform", *args, stdout=out)
    text = out.getvalue()
    assert "Registered" in text
    assert "https://tool.example.org/lti/login/" in text and "https://tool.example.org/lti/launch/" in text
    assert "https://tool.example.org/lti/jwks/" in text
    assert Key.objects.filter(is_active=True).count() == 1  # the tool's key, made on first need

    call_command("lti_register_platform", *args[:-4], "--deployment-id", "d2", "--keyset-url",
                 "https://lms.example.edu/jwks2", stdout=StringIO())  # fmt: skip
    registration = LtiRegistration.objects.get()
    assert registration.keyset_url == "https://lms.example.edu/jwks2"
    assert set(LtiDeployment.objects.filter(is_active=True).values_list("deployment_id", flat=True)) == {"d1", "d2"}
    assert Key.objects.count() == 1


def test_a_platform_with_a_static_public_key(lms: Lms, platform: TestPlatform, tmp_path: Path) -> None:
    static = RSAKey("not-published")
    pem = tmp_path / "platform.pem"
    pem.write_text(static.public_pem)
    call_command(
        "lti_register_platform", "--issuer", platform.issuer, "--client-id", platform.client_id,
        "--deployment-id", platform.deployment_id, "--auth-login-url", platform.auth_url,
        "--auth-token-url", platform.token_url, "--public-key-file", str(pem), stdout=StringIO(),
    )  # fmt: skip
    assert StaticPlatformKey.objects.exists()
    signed = lms.launch(Client(), sub="t", roles=INSTRUCTOR, sign=lambda body: platform.sign(body, static))
    assert signed.status_code == 200, signed.content.decode()
    assert platform.jwks_fetches == 0
    forged = lms.launch(Client(), sub="u", roles=INSTRUCTOR)  # the published key is not this platform's
    assert forged.status_code == 400
    assert User.objects.count() == 1
