"""What the tool remembers beyond django-lti's rows: who an LTI subject is here, which cohort a
course is, where a link points and where its grades go, and which memberships LTI made."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from lti_tool.models import LtiContext, LtiRegistration, LtiResourceLink


class LtiIdentity(models.Model):
    """A platform user (issuer, subject) signed in here as ``user``. The spec makes ``sub`` unique
    per issuer, so two registrations of one platform share identities."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lti_identities")
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "LTI identities"
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="lti_identity_unique")]

    def __str__(self) -> str:
        return f"{self.subject}@{self.issuer}"


class CohortLink(models.Model):
    """An LTI context (a course on a deployment) is this cohort."""

    context = models.OneToOneField(LtiContext, on_delete=models.CASCADE, related_name="cohort_link")
    cohort = models.OneToOneField("progress.Cohort", on_delete=models.CASCADE, related_name="lti_link")
    created_at = models.DateTimeField(auto_now_add=True)
    roster_synced_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.context} → {self.cohort}"


class RosterEntry(models.Model):
    """A cohort membership that LTI made (a launch or the roster): the roster sync removes only these."""

    link = models.ForeignKey(CohortLink, on_delete=models.CASCADE, related_name="roster")
    identity = models.ForeignKey(LtiIdentity, on_delete=models.CASCADE, related_name="roster_entries")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "roster entries"
        constraints = [models.UniqueConstraint(fields=["link", "identity"], name="lti_roster_entry_unique")]

    def __str__(self) -> str:
        return f"{self.identity} in {self.link_id}"


class LinkTarget(models.Model):
    """Where a resource link (placed by deep linking) lands, and its AGS endpoints if gradable."""

    resource_link = models.OneToOneField(LtiResourceLink, on_delete=models.CASCADE, related_name="target")
    workbook = models.ForeignKey("exercises.Workbook", on_delete=models.CASCADE, related_name="+")
    chapter = models.ForeignKey("exercises.Chapter", on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    lineitem_url = models.URLField(max_length=1000, blank=True, help_text="Blank: created on the first score.")
    lineitems_url = models.URLField(max_length=1000, blank=True)
    scopes = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.resource_link} → {self.workbook_id}/{self.chapter_id or '-'}"

    @property
    def gradable(self) -> bool:
        return SCORE_SCOPE in self.scopes and bool(self.lineitem_url or self.lineitems_url)


SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"


class GradeBinding(models.Model):
    """A learner's grade for a gradable link: posted to the platform after their solves."""

    target = models.ForeignKey(LinkTarget, on_delete=models.CASCADE, related_name="bindings")
    identity = models.ForeignKey(LtiIdentity, on_delete=models.CASCADE, related_name="grade_bindings")
    last_solved = models.IntegerField(null=True, blank=True)
    last_total = models.IntegerField(null=True, blank=True)
    last_posted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["target", "identity"], name="lti_grade_binding_unique")]

    def __str__(self) -> str:
        return f"{self.identity} on {self.target_id}"


class StaticPlatformKey(models.Model):
    """A platform's public key (PEM) for a platform that publishes no key set URL."""

    registration = models.OneToOneField(LtiRegistration, on_delete=models.CASCADE, related_name="static_key")
    public_key = models.TextField()

    def __str__(self) -> str:
        return f"static key of {self.registration}"


class PlatformHost(models.Model):
    """A host the platform's deep linking may return to, besides the hosts of its issuer and
    configured URLs: Canvas Cloud's issuer is canvas.instructure.com while courses live on
    school.instructure.com or the school's own domain (claims.return_url_check)."""

    registration = models.ForeignKey(LtiRegistration, on_delete=models.CASCADE, related_name="return_hosts")
    host = models.CharField(max_length=253, help_text="A host name, e.g. school.instructure.com (no scheme, no port).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["registration", "host"], name="lti_platform_host_unique")]

    def __str__(self) -> str:
        return f"{self.host} for {self.registration_id}"


class ContextLineItem(models.Model):
    """A gradebook column of the tool's own in a course, known by its resource id (an app above
    ``lti`` names it, e.g. ``assessment:12``): created on the platform once, or the platform's
    own found and reused (``services.context_lineitem_ensure``). Unique per (course, resource id):
    a second creator waits on the row's lock and finds the URL the first stored."""

    context = models.ForeignKey(LtiContext, on_delete=models.CASCADE, related_name="+")
    resource_id = models.CharField(max_length=255)
    lineitem_url = models.URLField(max_length=1000, blank=True, help_text="Blank: found or created on the first score.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["context", "resource_id"], name="lti_context_lineitem_unique")]

    def __str__(self) -> str:
        return f"{self.resource_id} in {self.context_id}"
