"""Production settings: no unsafe defaults. Refuses to start without a real secret key, with
DEBUG on, or with no allowed hosts; `manage.py check --deploy` is clean under these. Without an
SMTP server password resets by email are off, and the pages say so."""

from django.core.exceptions import ImproperlyConfigured

from config.env import env
from config.settings.base import *  # noqa: F403

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY or SECRET_KEY.startswith("dev-insecure") or len(SECRET_KEY) < 50:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a random value of at least 50 characters.")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
if DEBUG:
    raise ImproperlyConfigured("DEBUG must be off in production.")
if CONTENT_DEV:  # the edit loop shows authors' file errors on pages
    raise ImproperlyConfigured("CONTENT_DEV (the authors' edit loop) must be off in production.")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=[])
if not ALLOWED_HOSTS or "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("DJANGO_ALLOWED_HOSTS must list the site's host names (no wildcard).")
if not env.str("DATABASE_URL", default=""):
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL in production.")
if not env.str("REDIS_URL", default=""):
    raise ImproperlyConfigured("REDIS_URL must point at Redis in production.")
# Password resets need an SMTP server. Without one the reset pages say resets are off here (mail
# written to files would reach no learner); a stack tried out without mail still starts. With
# one, the sender must be real: a made-up one is refused or filed as spam by receiving servers.
PASSWORD_RESET_BY_EMAIL = bool(EMAIL_HOST)
if EMAIL_HOST and not env.str("DEFAULT_FROM_EMAIL", default=""):
    raise ImproperlyConfigured("DEFAULT_FROM_EMAIL must be set with EMAIL_HOST: the sender of password resets.")

# HTTPS everywhere. https://docs.djangoproject.com/en/5.2/howto/deployment/checklist/
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
