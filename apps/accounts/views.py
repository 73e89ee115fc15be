"""Sign up, log in, log out and reset a forgotten password on the web (Django's auth views, a
sign-up view limited per client address, and a reset request view that rate-limits)."""

from typing import Any

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_http_methods

from apps.accounts import services
from apps.accounts.forms import PasswordResetRequestForm, SignupForm, ThrottledAuthenticationForm, client_address
from apps.core.exceptions import ApplicationError


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("web:home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        client = client_address(request)
        try:
            services.signup_admit(client=client)
        except ApplicationError as exc:  # too many accounts from this address (or no Redis: a 503)
            form.add_error(None, exc.message)
            response = render(request, "accounts/signup.html", {"form": form}, status=exc.status_code)
            response["Retry-After"] = str(exc.details["retry_after"])
            return response
        user = services.user_create(
            username=form.cleaned_data["username"],
            password=form.cleaned_data["password1"],
            email=form.cleaned_data.get("email") or "",
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        services.login_remember(username=user.username, client=client)
        return redirect("web:home")
    return render(request, "accounts/signup.html", {"form": form})


class LoginView(auth_views.LoginView):
    """Django's login view; a sign-in refused by the limits answers 429 (or 503 without Redis)
    with a Retry-After, and the form says why."""

    template_name = "accounts/login.html"
    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        refusal = getattr(form, "refusal", None)
        if isinstance(refusal, ApplicationError):
            response.status_code = refusal.status_code
            response["Retry-After"] = str(refusal.details["retry_after"])
        return response


class PasswordResetRequestView(auth_views.PasswordResetView):
    """Step 1: ask for the link. Every valid request ends on the same "check your inbox" page,
    whether or not an account has that address; only a client over its limit sees an error."""

    form_class = PasswordResetRequestForm
    template_name = "accounts/password_reset_form.html"
    email_template_name = "accounts/password_reset_email.txt"
    subject_template_name = "accounts/password_reset_subject.txt"
    success_url = reverse_lazy("web:password-reset-done")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.PASSWORD_RESET_BY_EMAIL:  # production without an SMTP server
            return render(request, "accounts/password_reset_off.html")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        try:
            send = services.password_reset_admit(client=client_address(self.request), email=form.cleaned_data["email"])
        except ApplicationError as exc:
            form.add_error(None, exc.message)
            response = self.form_invalid(form)
            response.status_code = exc.status_code
            response["Retry-After"] = str(exc.details["retry_after"])
            return response
        if not send:
            return HttpResponseRedirect(self.get_success_url())
        return super().form_valid(form)


password_reset_done = auth_views.PasswordResetDoneView.as_view(template_name="accounts/password_reset_done.html")
password_reset_confirm = auth_views.PasswordResetConfirmView.as_view(
    template_name="accounts/password_reset_confirm.html", success_url=reverse_lazy("web:password-reset-complete")
)
password_reset_complete = auth_views.PasswordResetCompleteView.as_view(
    template_name="accounts/password_reset_complete.html"
)
