"""Why a launch is refused: shown to the person in the LMS as a page (templates/lti/error.html)."""

from __future__ import annotations


class LaunchRefused(Exception):
    """A launch, deep linking response or continue link that must not sign anyone in."""

    def __init__(
        self, message: str, *, code: str, status: int = 400, title: str = "This LTI launch was refused"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.title = title


class PlatformUnavailable(Exception):
    """A call to a platform failed in a way worth retrying (network, 5xx, 429)."""
