"""The tool's rows in the admin. Platforms (registrations, with their deployments inline) and the
tool's keys are django-lti's admin; here: linked cohorts (with a roster sync action) and accounts."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.lti import services
from apps.lti.exceptions import PlatformUnavailable
from apps.lti.models import (
    CohortLink,
    GradeBinding,
    LinkTarget,
    LtiIdentity,
    PlatformHost,
    RosterEntry,
    StaticPlatformKey,
)


@admin.register(CohortLink)
class CohortLinkAdmin(admin.ModelAdmin[CohortLink]):
    list_display = ["cohort", "context", "roster_synced_at", "created_at"]
    list_select_related = ["cohort", "context"]
    readonly_fields = ["context", "cohort", "created_at", "roster_synced_at"]
    actions = ["sync_roster"]

    @admin.action(description="Sync the roster from the platform (NRPS)")
    def sync_roster(self, request: HttpRequest, queryset: QuerySet[CohortLink]) -> None:
        for link in queryset:
            try:
                result = services.roster_sync(link_id=link.pk)
            except PlatformUnavailable as error:
                self.message_user(request, f"{link.cohort}: the platform did not answer ({error}).", messages.ERROR)
                continue
            self.message_user(request, f"{link.cohort}: {result.added} added, {result.removed} removed.")


@admin.register(LtiIdentity)
class LtiIdentityAdmin(admin.ModelAdmin[LtiIdentity]):
    list_display = ["user", "issuer", "subject", "created_at"]
    list_select_related = ["user"]
    search_fields = ["user__username", "subject", "issuer"]
    readonly_fields = ["user", "issuer", "subject", "created_at"]


@admin.register(LinkTarget)
class LinkTargetAdmin(admin.ModelAdmin[LinkTarget]):
    list_display = ["resource_link", "workbook", "chapter", "lineitem_url"]
    list_select_related = ["resource_link", "workbook", "chapter"]


admin.site.register(RosterEntry)
admin.site.register(GradeBinding)
admin.site.register(StaticPlatformKey)


@admin.register(PlatformHost)
class PlatformHostAdmin(admin.ModelAdmin[PlatformHost]):
    """Hosts a platform's deep linking may return to, besides its issuer's and URLs' hosts."""

    list_display = ["host", "registration"]
    list_select_related = ["registration"]
