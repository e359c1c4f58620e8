"""Accounts (django-allauth, odds/accounts): sign-up with a verified email, password reset by
emailed link, notices of security changes, and a second factor (allauth.mfa: TOTP and recovery
codes) that staff must use before any staff page or action (``StaffSecondFactorMiddleware``)."""

from webapp.settings.env import env

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]

# Punters sign in with their username or their email; a sign-up gives both (allauth makes the
# username from the email's local part).
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_USER_MODEL_USERNAME_FIELD = "username"
# A new account browses at once; it bets once its email is verified (the wallet's flag, read by
# sb_bet_place). "optional": allauth sends the mail but does not hold the login.
ACCOUNT_EMAIL_VERIFICATION = "optional"
ACCOUNT_CONFIRM_EMAIL_ON_GET = False
ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS = env.account_email_confirmation_expire_days
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = False
ACCOUNT_EMAIL_SUBJECT_PREFIX = "Sportsbook: "
# A notice by mail when the password or an email address changes, or a second factor is added
# or removed.
ACCOUNT_EMAIL_NOTIFICATIONS = True
ACCOUNT_SESSION_REMEMBER = None
# The login page shows its form to a signed-in visitor too (to switch accounts), as Django's did.
ACCOUNT_AUTHENTICATED_LOGIN_REDIRECTS = False
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_PREVENT_ENUMERATION = True
ACCOUNT_FORMS = {
    "login": "odds.accounts.forms.LoginForm",
    "signup": "odds.accounts.forms.SignupForm",
    "reset_password": "odds.accounts.forms.ResetPasswordForm",
}
# Logins, sign-ups and password resets are counted by the site's own limits (odds.core.auth,
# odds.accounts.limits, over Redis through the `limits` library), not allauth's second copy.
ACCOUNT_RATE_LIMITS = {"login": False, "login_failed": False, "signup": False, "reset_password": False}
# Password-reset links work once and expire with Django's token (PASSWORD_RESET_TIMEOUT).
PASSWORD_RESET_TIMEOUT = env.password_reset_timeout_s

# Sign-ups and password-reset requests per client address and per email address, per window.
SIGNUP_PER_IP = env.signup_per_ip
SIGNUP_PER_EMAIL = env.signup_per_email
PASSWORD_RESET_PER_IP = env.password_reset_per_ip
PASSWORD_RESET_PER_EMAIL = env.password_reset_per_email
ACCOUNT_LIMIT_WINDOW_S = env.account_limit_window_s

MFA_SUPPORTED_TYPES = ["totp", "recovery_codes"]
MFA_TOTP_ISSUER = "Sportsbook"
# A code from the period just before or after now is taken too (RFC 6238 §5.2): a code typed in
# the last second of its 30 s is not refused on arrival. Each code still works only once.
MFA_TOTP_TOLERANCE = 1
MFA_ADAPTER = "allauth.mfa.adapter.DefaultMFAAdapter"
