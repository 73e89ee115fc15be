"""`make run`'s server: Django's development server (``runserver``, with its options) that prints
the demo accounts and their passwords right after its own banner, so that they are the last thing
on a newcomer's terminal rather than scrolled away above it."""

from __future__ import annotations

from django.contrib.staticfiles.management.commands.runserver import Command as RunserverCommand

from apps.learning.management.commands.seed_demo import demo_lines


class Command(RunserverCommand):
    help = "Serve the platform for development (as runserver) and print the demo accounts after the banner."

    def on_bind(self, server_port: int) -> None:
        super().on_bind(server_port)
        # The address as runserver's banner gives it (its attributes, which django-stubs does not declare).
        addr = str(getattr(self, "addr", "127.0.0.1"))
        if getattr(self, "_raw_ipv6", False):
            addr = f"[{addr}]"
        elif addr == "0":
            addr = "0.0.0.0"  # noqa: S104 - a name for what the server bound, not a bind
        lines = demo_lines(url=f"{self.protocol}://{addr}:{server_port}/")
        if lines:
            self.stdout.write("\n" + "\n".join(lines))
