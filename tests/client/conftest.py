"""The generated-client journey runs on the browser tests' live server and account clean-up."""

from tests.e2e.conftest import e2e_db, live_url  # noqa: F401 - fixtures, shared with tests/e2e
