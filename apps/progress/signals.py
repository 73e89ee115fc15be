"""Signals other apps may listen to; progress imports none of them (the layers go one way)."""

from django.dispatch import Signal

# Sent after the commit of the transaction in which an exercise became solved, with the keyword
# arguments user_id, exercise_id and workbook_id (ints). Receivers must not raise.
exercise_solved = Signal()
