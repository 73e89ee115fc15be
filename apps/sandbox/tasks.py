"""The sandbox's own Celery task: housekeeping of containers, no database."""

from __future__ import annotations

from celery import shared_task

from apps.sandbox import selectors


@shared_task(name="sandbox.reap_containers", ignore_result=True)
def reap_containers() -> int:
    """Remove sandbox containers past their deadline that a dead run left behind."""
    return len(selectors.runner().reap())
