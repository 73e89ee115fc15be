"""Register (or update) an LTI 1.3 platform, and print what its administrator types in the LMS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from apps.lti import services


class Command(BaseCommand):
    help = "Register an LTI 1.3 platform (idempotent: running it again updates it). See docs/lti.md."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--issuer", required=True, help="The platform's issuer (iss), e.g. https://canvas.instructure.com"
        )
        parser.add_argument("--client-id", required=True, help="The client id the platform gave this tool")
        parser.add_argument("--deployment-id", action="append", default=[], help="A deployment id (repeat for several)")
        parser.add_argument("--auth-login-url", required=True, help="The platform's OIDC authorization URL")
        parser.add_argument("--auth-token-url", required=True, help="The platform's OAuth2 token URL")
        parser.add_argument("--keyset-url", default="", help="The platform's public key set (JWKS) URL")
        parser.add_argument(
            "--public-key-file", default="", help="The platform's public key (PEM), without a key set URL"
        )
        parser.add_argument("--audience", default="", help="The token endpoint's audience, if not its URL")
        parser.add_argument("--name", default="", help="A name for the admin")
        parser.add_argument(
            "--return-host",
            action="append",
            default=None,
            help="A host deep linking may return to besides those of the issuer and URLs (repeat for several; "
            "Canvas Cloud: your school's Canvas host)",
        )
        parser.add_argument(
            "--base-url", default="https://YOUR-SITE", help="This site's public URL, for the URLs printed"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        pem = ""
        if options["public_key_file"]:
            try:
                pem = Path(options["public_key_file"]).read_text()
            except OSError as error:
                raise CommandError(f"Cannot read the public key file: {error}") from error
        if not options["deployment_id"]:
            raise CommandError("Give at least one --deployment-id.")
        try:
            registration, created = services.platform_register(
                issuer=options["issuer"],
                client_id=options["client_id"],
                deployment_ids=options["deployment_id"],
                auth_login_url=options["auth_login_url"],
                auth_token_url=options["auth_token_url"],
                keyset_url=options["keyset_url"],
                public_key_pem=pem,
                name=options["name"],
                audience=options["audience"],
                return_hosts=options["return_host"],
            )
        except ValueError as error:
            raise CommandError(str(error)) from error
        base = options["base_url"].rstrip("/")
        self.stdout.write(self.style.SUCCESS(f"{'Registered' if created else 'Updated'} {registration.name}."))
        self.stdout.write(f"Deployments: {', '.join(options['deployment_id'])}")
        self.stdout.write("Type these in the LMS:")
        self.stdout.write(f"  OIDC login initiation URL:  {base}{reverse('lti:login')}")
        self.stdout.write(f"  Redirect / launch URL:      {base}{reverse('lti:launch')}")
        self.stdout.write(f"  Deep linking URL:           {base}{reverse('lti:launch')}")
        self.stdout.write(f"  Public key set (JWKS) URL:  {base}{reverse('lti:jwks')}")
        self.stdout.write(
            f"  (login URL for this registration only: {base}"
            f"{reverse('lti:login-registration', kwargs={'registration_uuid': registration.uuid})})"
        )
