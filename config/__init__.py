"""Project package. It is called ``config`` and not ``platform``: a top-level package named
``platform`` would shadow the standard library module that uuid, Celery and pytest import."""

from config.celery_app import app as celery_app

__all__ = ("celery_app",)
