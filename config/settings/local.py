"""What `make run` uses (the embedded default unless DATABASE_URL/REDIS_URL are set).

DEBUG is off here as in production: a crash or an oversized body gets our error page (JSON under
/api/), never Django's debug page with the traceback and settings, and static files are served by
WhiteNoise from `collectstatic`'s output, as in production. `DJANGO_DEBUG=true make run` opts in to
the debug pages, WhiteNoise serving straight from the source folders, and DRF's browsable API.
"""

from config.env import env
from config.settings.base import *  # noqa: F403

DEBUG = env.bool("DJANGO_DEBUG", default=False)
DEMO_ACCOUNTS_ALLOWED = True  # `make run` prints its demo accounts (seed_demo)
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] = [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ]
