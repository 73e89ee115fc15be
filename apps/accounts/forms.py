from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from apps.accounts import services
from apps.accounts.models import User
from apps.core.exceptions import ApplicationError

EMAIL_HELP = "Optional. It is only used to send you a password reset link if you forget your password."
EMAIL_HELP_NO_MAIL = (
    "Optional. This server does not send email yet, so it cannot mail you a reset link; if you forget your "
    "password, an administrator sets a new one."
)


def email_help() -> str:
    return EMAIL_HELP if settings.PASSWORD_RESET_BY_EMAIL else EMAIL_HELP_NO_MAIL


class SignupForm(UserCreationForm[User]):
    email = forms.EmailField(
        required=False,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].help_text = email_help() + " You can add or change it later on your profile."


class PasswordResetRequestForm(PasswordResetForm):
    """Django's form (it mails every active account with this address and a usable password,
    and logs rather than raises when the mail server fails), with our label and help."""

    email = forms.EmailField(
        label="Email",
        max_length=254,
        help_text="The address on your account. If there is one, a reset link goes to it.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )


class ThrottledAuthenticationForm(AuthenticationForm):
    """Django's login form signing in through the same service as the API's token endpoint
    (apps.accounts.services.login_check): the limits per client address, per (username, address)
    and per username, checked before the password is, and failures counted.

    ``refusal`` holds the 429/503 error when the limits refused the attempt, for the view's status.
    """

    refusal: ApplicationError | None = None

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        # The same client identity as the API's throttles (DRF's, NUM_PROXIES aware).
        client = client_address(self.request) if self.request is not None else "unknown"
        try:
            if username is not None and password:
                self.user_cache = services.login_check(
                    request=self.request, username=username, password=password, client=client, count_request=True
                )
            else:  # a field is missing (its error is shown): the request still counts per client
                services.login_rate_admit(client=client)
        except ApplicationError as exc:
            if exc.code == "invalid_credentials":
                raise self.get_invalid_login_error() from None
            self.refusal = exc
            raise ValidationError(exc.message, code=exc.code) from None
        if self.user_cache is not None:
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data


def client_address(request: HttpRequest) -> str:
    """The client's address as the API's throttles identify it (DRF's, NUM_PROXIES aware)."""
    return str(BaseThrottle().get_ident(Request(request)))
