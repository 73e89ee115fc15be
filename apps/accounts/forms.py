from django import forms
from django.contrib.auth.forms import UserCreationForm

from apps.accounts.models import User


class SignupForm(UserCreationForm[User]):
    email = forms.EmailField(required=False, help_text="Optional; for password resets later.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")
