"""``instance_scored``: an instance's final score may have changed (submitted, closed, overridden).
Sent after the transaction commits; the LMS link listens (``apps.assessments.lti``)."""

from django.dispatch import Signal

instance_scored = Signal()  # kwargs: instance_id
