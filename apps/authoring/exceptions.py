from apps.core.exceptions import ApplicationError


class DraftInvalid(ApplicationError):
    """A draft whose YAML is not an exercise (not YAML, not the schema, a taken id or number)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems), code="draft_invalid", details={"problems": problems})
        self.problems = problems


class DraftNotPublishable(ApplicationError):
    """Publishing refused: the checks did not pass on this very text, or the exercise moved on."""

    status_code = 409

    def __init__(self, message: str) -> None:
        super().__init__(message, code="draft_not_publishable")


class DraftPublished(ApplicationError):
    """A published draft is the record of what went live: it is not edited or checked again."""

    status_code = 409

    def __init__(self) -> None:
        super().__init__("This draft is published; start a new draft to change the exercise again.", code="published")
