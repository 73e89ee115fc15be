import logging
import threading
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from apps.exercises import devloop

STATUS_PATH = "/dev/content-status/"


class Command(BaseCommand):
    help = (
        "The authors' edit loop: watch every content root (CONTENT_DIRS) and, on a saved file, re-sync and "
        "re-check only the chapter(s) it changes, one line per change. With --serve, also serve the platform "
        "in this process (make content-dev), in dev mode: an open exercise or workbook page reloads itself "
        "after a change, and shows a broken file's error instead of the old content until it is fixed. "
        "Without --serve, run the server with CONTENT_DEV=true and a shared cache (REDIS_URL) to see the same."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--serve",
            nargs="?",
            const="127.0.0.1:8000",
            metavar="ADDRPORT",
            help="Serve the platform here too (as make run does; default 127.0.0.1:8000), with the watcher beside it.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        watcher = devloop.Watcher()
        roots = ", ".join(str(r) for r in watcher.roots)
        self.stdout.write(f"content_dev: watching {len(watcher.seen)} files under {roots} (every {devloop.POLL_S} s)")

        def write(line: str) -> None:
            self.stdout.write(line)
            self.stdout.flush()

        if not options["serve"]:
            if not settings.REDIS_URL:
                self.stdout.write(
                    "content_dev: without REDIS_URL the cache is this process's own, so a server started "
                    "elsewhere neither reloads its pages nor shows errors: use --serve (make content-dev)"
                )
            try:
                watcher.run(write=write)
            except KeyboardInterrupt:
                return
            return
        # Dev mode for this process's pages (never set in production settings): the server runs here,
        # beside the watcher, so that on the embedded default (a per-process cache) the pages see
        # the generation and the errors the watcher writes.
        settings.CONTENT_DEV = True
        # Each open page polls the status a few times a second: not a line each on the terminal.
        logging.getLogger("django.server").addFilter(lambda record: STATUS_PATH not in record.getMessage())
        stop = threading.Event()
        thread = threading.Thread(target=watcher.run, kwargs={"write": write, "stop": stop.is_set}, daemon=True)
        thread.start()
        try:
            # By name: the demo server (apps.learning) prints the demo accounts after its banner.
            call_command("serve_demo", options["serve"], use_reloader=False)
        finally:
            stop.set()
