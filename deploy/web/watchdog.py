#!/usr/bin/env python3
"""Restart this compose project's sandbox workers when they die or turn unhealthy.

Docker's restart policies do not cover `docker kill`: the engine records a kill through its API
as a manual stop, and neither `always`, `unless-stopped` nor `on-failure` starts the container
again (measured on Engine 20.10; a crash or an OOM kill *is* restarted). Unhealthy containers are
never restarted by Docker itself. So every WATCHDOG_INTERVAL_S (default 5) seconds this looks at
the containers labelled with its own compose project and one of WATCHDOG_SERVICES (default
sandbox-worker), and

- starts one that exited with a non-zero code (137 after `docker kill` or a stop that had to
  SIGKILL) at least WATCHDOG_SETTLE_S (default 3) seconds ago — the delay keeps it out of the way
  of `docker-compose up` recreating a container; a clean exit (0: `docker-compose stop`) is the
  operator's wish and is left alone;
- restarts one that Docker reports as unhealthy (its healthcheck: `mlsys-healthcheck sandbox`),
  with 10 s for it to stop before SIGKILL.

It finds its project from its own container's labels, so it only ever touches its own stack.
One-off containers (`docker-compose run`) are ignored. It holds the Docker socket (root on the
host): it runs nothing else, reads no settings and opens no port.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from datetime import UTC, datetime
from types import FrameType

import docker
from docker.errors import DockerException, NotFound
from docker.models.containers import Container

PROJECT = "com.docker.compose.project"
SERVICE = "com.docker.compose.service"
ONEOFF = "com.docker.compose.oneoff"

logger = logging.getLogger("mlsys-watchdog")
_stop = threading.Event()


def _finished_ago(container: Container) -> float:
    finished = str(container.attrs["State"].get("FinishedAt") or "")
    try:
        # Docker gives nanoseconds ("2024-05-01T10:00:00.123456789Z"); seconds are enough here.
        when = datetime.strptime(finished[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return 0.0
    return (datetime.now(UTC) - when).total_seconds()


def tend(client: docker.DockerClient, project: str, services: list[str], settle_s: float) -> None:
    for service in services:
        filters = {"label": [f"{PROJECT}={project}", f"{SERVICE}={service}"]}
        for container in client.containers.list(all=True, filters=filters, ignore_removed=True):
            if container.labels.get(ONEOFF, "False") == "True":
                continue
            state = container.attrs["State"]
            status = state.get("Status")
            health = (state.get("Health") or {}).get("Status")
            try:
                if status in ("exited", "dead") and state.get("ExitCode") != 0:
                    if _finished_ago(container) >= settle_s:
                        logger.warning(
                            "%s exited with code %s (killed or crashed): starting it",
                            container.name,
                            state.get("ExitCode"),
                        )
                        container.start()
                elif status == "running" and health == "unhealthy":
                    logger.warning("%s is unhealthy: restarting it", container.name)
                    # A hung worker may ignore SIGTERM; whatever it was running is re-queued when
                    # its lease runs out (apps/learning/services.py), so a short grace is enough.
                    container.restart(timeout=10)
            except NotFound:
                pass  # removed meanwhile (docker-compose up recreating it, or down)
            except DockerException as exc:
                logger.error("could not start %s: %s", container.name, exc)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _stop.set()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    services = [s.strip() for s in os.environ.get("WATCHDOG_SERVICES", "sandbox-worker").split(",") if s.strip()]
    interval = float(os.environ.get("WATCHDOG_INTERVAL_S", "5"))
    settle = float(os.environ.get("WATCHDOG_SETTLE_S", "3"))
    client = docker.from_env()
    try:
        me = client.containers.get(socket.gethostname())
    except DockerException as exc:
        logger.critical("cannot find my own container through the Docker socket: %s", exc)
        return 1
    project = me.labels.get(PROJECT)
    if not project:
        logger.critical("my container has no %s label: run me as a compose service", PROJECT)
        return 1
    logger.info("watching %s of compose project %s every %ss", ", ".join(services), project, interval)
    while not _stop.is_set():
        try:
            tend(client, project, services, settle)
        except DockerException as exc:
            logger.error("Docker Engine unreachable: %s", exc)
        _stop.wait(interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
