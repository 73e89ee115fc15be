"""The one place environment variables are read (django-environ)."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# A local .env is a convenience for development; production passes real environment variables.
_dotenv = BASE_DIR / ".env"
if _dotenv.is_file():
    env.read_env(str(_dotenv))
