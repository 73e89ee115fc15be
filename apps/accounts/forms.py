from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm, UserCreationForm

from apps.accounts.models import User

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
