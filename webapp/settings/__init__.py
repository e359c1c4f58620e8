"""Settings, one module per concern; every value comes from the environment, read and checked
once (webapp/settings/env.py: the first module to import it refuses to start, naming every
missing or malformed setting)."""

from webapp.settings.accounts import *
from webapp.settings.base import *
from webapp.settings.celery import *
from webapp.settings.channels import *
from webapp.settings.db import *
from webapp.settings.email import *
from webapp.settings.kafka import *
from webapp.settings.logging import *
from webapp.settings.ops import *
from webapp.settings.redis import *
from webapp.settings.security import *
