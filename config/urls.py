from csp.decorators import csp_update
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from apps.accounts import apis as account_apis
from apps.accounts import views as account_views
from apps.core.csp import csp_report
from apps.core.exceptions import page_not_found
from apps.learning import views as learning_views
from apps.progress import views as progress_views

# The admin is where instructors and authors work: it carries the product's name, not Django's.
admin.site.site_header = "ML-systems workbooks"
admin.site.site_title = "ML-systems workbooks admin"
admin.site.index_title = "Teaching and authoring"

api_v1: list[URLPattern | URLResolver] = [
    path("auth/token/", account_apis.TokenApi.as_view(), name="auth-token"),
    path("auth/tokens/", account_apis.TokensApi.as_view(), name="auth-tokens"),
    path("me/", account_apis.MeApi.as_view(), name="me"),
    path("", include("apps.learning.urls")),
    path("", include("apps.precheck.urls")),
    path("", include("apps.progress.urls")),
    path("", include("apps.assessments.urls")),
    path("", include("apps.itemstats.urls")),
]

web: list[URLPattern | URLResolver] = [
    path("", learning_views.home, name="home"),
    path("signup/", account_views.signup, name="signup"),
    path("login/", account_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/reset/", account_views.PasswordResetRequestView.as_view(), name="password-reset"),
    path("password/reset/sent/", account_views.password_reset_done, name="password-reset-done"),
    path("password/reset/done/", account_views.password_reset_complete, name="password-reset-complete"),
    path("password/reset/<uidb64>/<token>/", account_views.password_reset_confirm, name="password-reset-confirm"),
    path("progress/", progress_views.progress, name="progress"),
    path("reviews/", learning_views.reviews, name="reviews"),
    path("leaderboard/", progress_views.leaderboard, name="leaderboard"),
    path("cohorts/", progress_views.cohorts, name="cohorts"),
    path("profile/", progress_views.profile, name="profile"),
    path("w/<slug64:slug>/reset/", progress_views.workbook_reset, name="workbook-reset"),
    path("w/<slug64:slug>/skills/", progress_views.skills, name="skills"),
    path("w/<slug64:slug>/", learning_views.workbook, name="workbook"),
    path("w/<slug64:slug>/<exercise_number:number>/", learning_views.exercise, name="exercise"),
    path("", include("apps.assessments.web_urls")),
]


@csrf_exempt  # a 404 whatever the method: not Django's HTML CSRF 403 for a POST to nowhere
def api_not_found(request: HttpRequest) -> HttpResponse:
    """Whatever else is under /api/: the JSON 404. Without this pattern an unmatched URL reaches
    handler404 only when DEBUG is off; with DEBUG on (`make run`) Django answers its HTML page."""
    return page_not_found(request, Http404())


urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include((api_v1, "api"))),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's setup as a script of its own (no inline script); its React
    # components set style attributes, which only this page allows.
    path(
        "api/docs/",
        csp_update({"style-src": ["'unsafe-inline'"]})(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="swagger-ui",
    ),
    re_path(r"^api/", api_not_found),
    path("lti/", include("apps.lti.urls")),
    path("csp-report/", csp_report, name="csp-report"),
    path("dev/content-status/", learning_views.content_dev_status, name="content-dev-status"),  # make content-dev only
    path("", include((web, "web"))),
]

# Under /api/ every error is the JSON error shape, including those raised before a DRF view runs.
handler400 = "apps.core.exceptions.bad_request"
handler403 = "apps.core.exceptions.permission_denied"
handler404 = "apps.core.exceptions.page_not_found"
handler500 = "apps.core.exceptions.server_error"
