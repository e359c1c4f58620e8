"""Settings, one module per concern; every value comes from the environment."""

from webapp.settings.accounts import *
from webapp.settings.base import *
from webapp.settings.celery import *
from webapp.settings.channels import *
from webapp.settings.db import *
from webapp.settings.email import *

# Every setting above is read; now refuse to start if any was missing or malformed, naming each.
from webapp.settings.env import check
from webapp.settings.kafka import *
from webapp.settings.logging import *
from webapp.settings.ops import *
from webapp.settings.redis import *
from webapp.settings.security import *

check()
