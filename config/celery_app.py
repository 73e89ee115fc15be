"""The Celery application. Configuration comes from Django settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("mlsys")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
