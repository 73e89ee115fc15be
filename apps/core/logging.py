"""Structured log lines: ``level logger message key=value ...``.

Domain code logs with ``extra={"user_id": ..., "exercise_id": ..., "attempt_id": ...}``;
those keys are appended to the line so logs can be grepped and parsed.
"""

import logging

CONTEXT_KEYS = ("user_id", "exercise_id", "attempt_id", "version_id", "workbook", "verdict")


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        base = f"{self.formatTime(record)} {record.levelname} {record.name} {record.getMessage()}"
        pairs = [f"{k}={getattr(record, k)}" for k in CONTEXT_KEYS if hasattr(record, k)]
        line = " ".join([base, *pairs])
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line
