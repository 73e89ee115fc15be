"""The Celery application. Configuration comes from Django settings (CELERY_* names)."""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("mlsys")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def db_connections_checked(task: Any = None, **kwargs: Any) -> None:
    """Around each task, what Django does around each request: a connection past CONN_MAX_AGE, or
    broken (a database restart), is closed, and the next use of a kept one checks it first. With
    CELERY_DB_REUSE_MAX set, Celery no longer closes them all, which cost a reconnect per task.
    Not for an eager task: it runs inside its caller's request, perhaps in a transaction."""
    from django.db import close_old_connections

    if getattr(getattr(task, "request", None), "is_eager", False):
        return

    close_old_connections()
