"""The account forms allauth shows, as the site needs them: the login form keeps the field name
the login throttle reads (``username``), the sign-up form asks for date of birth, country and
currency, and sign-up and password-reset requests are counted per address and per email."""

from __future__ import annotations

from typing import Any

from allauth.account import forms as allauth_forms
from allauth.core import context
from django import forms
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils import timezone

from odds.accounts.limits import reset_attempt, signup_attempt
from odds.accounts.rules import COUNTRIES, CURRENCIES, MIN_AGE, old_enough
from odds.accounts.services import punter_signup_complete
from odds.core.clients import client_ip


class LoginForm(allauth_forms.LoginForm):
    """allauth's login (username or email, then a second factor when the account has one),
    posted as ``username`` and ``password`` like every login form of the site."""

    fields: dict[str, forms.Field]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields.pop("login")
        field.label = "Username or email"
        field.widget.attrs.update({"autocomplete": "username", "autocapitalize": "none", "autofocus": True})
        self.fields = {"username": field, **self.fields}

    def clean(self) -> dict[str, Any]:
        if "username" in self.cleaned_data:
            self.cleaned_data["login"] = self.cleaned_data["username"]
        return super().clean()


class SignupForm(allauth_forms.SignupForm):
    date_of_birth = forms.DateField(
        label="Date of birth",
        widget=forms.DateInput(attrs={"type": "date", "autocomplete": "bday"}),
        help_text=f"You must be {MIN_AGE} or over to open an account.",
    )
    country = forms.ChoiceField(
        label="Country", choices=COUNTRIES, widget=forms.Select(attrs={"autocomplete": "country"})
    )
    currency = forms.ChoiceField(
        label="Currency", choices=CURRENCIES, help_text="Your wallet, stakes and returns are in this currency."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Labelled fields, not only placeholders: a placeholder vanishes once typed in.
        self.fields["email"].label = "Email"
        self.fields["password1"].label = "Password"
        self.fields["password2"].label = "Password (again)"
        self.label_suffix = ""
        self.order_fields(["email", "password1", "password2", "date_of_birth", "country", "currency"])

    def clean_date_of_birth(self) -> Any:
        born = self.cleaned_data["date_of_birth"]
        if not old_enough(born=born, today=timezone.localdate()):
            raise forms.ValidationError(f"You must be {MIN_AGE} or over to open an account.")
        return born

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        email = str(cleaned.get("email") or self.data.get("email") or "")
        throttled = signup_attempt(ip=client_ip(context.request), email=email)
        if throttled is not None:
            raise forms.ValidationError(throttled.message, code="throttled")
        return cleaned

    def signup(self, request: HttpRequest, user: User) -> None:
        """allauth's hook once the user is saved: the profile and the wallet."""
        punter_signup_complete(
            user=user,
            date_of_birth=self.cleaned_data["date_of_birth"],
            country=self.cleaned_data["country"],
            currency=self.cleaned_data["currency"],
        )


class ResetPasswordForm(allauth_forms.ResetPasswordForm):
    """The reset request, counted per address and per email before anything else: the answer
    is the same for an email with an account and one without."""

    def clean_email(self) -> str:
        email = str(self.data.get("email") or "")
        throttled = reset_attempt(ip=client_ip(context.request), email=email)
        if throttled is not None:
            raise forms.ValidationError(throttled.message, code="throttled")
        return super().clean_email()
