"""What the settings models of the reducers (``spark/config.py``) and of the web processes
(``webapp/settings/env.py``) share: the field types and their checks, the production rule, and
the one message naming every problem.

Each model is a ``pydantic_settings.BaseSettings`` whose fields are named by their environment
variables (``validation_alias``). With ``SPORTSBOOK_ENV=production`` a field marked
``NO_PRODUCTION_DEFAULT`` has no development default: a process that would quietly use a
development address or key refuses to start instead, and says which settings to set.

``read`` builds a model from the variables it is given (the process passes its own environment;
nothing here reads it). Pydantic checks every field before it gives up, so its ``ValidationError``
becomes one ``ConfigError`` naming each environment variable and what it must be.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import annotated_types
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from reducers.redis_url import RedisUrlError, sentinel_target
from reducers.windows import parse_duration_ms

PRODUCTION_ENVIRONMENT = "production"


class ConfigError(ValueError):
    """One or more settings are missing or malformed; the message names each."""


def problem(text: str) -> PydanticCustomError:
    """A refusal a validator raises: ``text`` follows the variable's name in the message."""
    return PydanticCustomError("setting", "{text}", {"text": text})


def wanted(what: str, raw: object) -> PydanticCustomError:
    return problem(f"must be {what}, got {raw!r}")


def environ_values(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a model reads from ``environ``: an empty one counts as unset."""
    return {name: value for name, value in environ.items() if value}


class _Unset:
    """Put in place of a setting without a production default that production left unset."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET = _Unset()


def _refuse_unset(value: object) -> object:
    if value is UNSET:
        raise problem(f"must be set when SPORTSBOOK_ENV={PRODUCTION_ENVIRONMENT}")
    return value


# Marks a field (``Annotated[str, NO_PRODUCTION_DEFAULT]``) whose default is for development only.
NO_PRODUCTION_DEFAULT = BeforeValidator(_refuse_unset)


def _flag(raw: object) -> object:
    if isinstance(raw, bool):
        return raw
    text = str(raw).lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise wanted("true or false", raw)


def _duration(raw: str) -> str:
    try:
        parse_duration_ms(raw)
    except (ValueError, TypeError):
        raise wanted('a duration such as "500 milliseconds" or "1 minute"', raw) from None
    return raw


def _redis_url(raw: str) -> str:
    try:
        sentinel_target(raw)
    except RedisUrlError as exc:
        raise PydanticCustomError("setting_reason", "{reason}", {"reason": str(exc)}) from None
    return raw


def _names(raw: object) -> object:
    if isinstance(raw, str):
        return [item.strip() for item in raw.split(",") if item.strip()]
    return raw


# "true", "yes", "on", "1" or "false", "no", "off", "0", in any case.
Flag = Annotated[bool, BeforeValidator(_flag)]
# A duration Spark reads, such as "500 milliseconds" (reducers.windows.parse_duration_ms).
Duration = Annotated[str, AfterValidator(_duration)]
# A redis:// or redis+sentinel:// URL (reducers.redis_url).
RedisUrl = Annotated[str, NO_PRODUCTION_DEFAULT, AfterValidator(_redis_url)]
# A comma-separated list, blanks left out.
Names = Annotated[list[str], BeforeValidator(_names)]
# A number of seconds, 0 or more.
Seconds = Annotated[float, Field(ge=0)]
# A finite number.
Number = Annotated[float, Field(allow_inf_nan=False)]


class EnvironSource(PydanticBaseSettingsSource):
    """A settings model's source: every non-empty variable of ``environ`` by its exact name (the
    fields pick theirs by ``validation_alias``; the process passes its own environment)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self.environ = environ

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.environ.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return environ_values(self.environ)


# Each settings model's configuration (``model_config = SETTINGS_CONFIG``: a subclass's bases
# would otherwise bring BaseSettings' own): read once, unknown variables left alone, every default
# checked as a value from the environment is.
SETTINGS_CONFIG = SettingsConfigDict(frozen=True, extra="ignore", validate_default=True)

# The variables the model being read takes its values from (``read``).
_ENVIRON: ContextVar[Mapping[str, str]] = ContextVar("environ")


class EnvironmentSettings(BaseModel):
    """The base of each settings model (``class Model(EnvironmentSettings, BaseSettings)``, read
    with ``read``): which environment, where the values come from, and the production rule."""

    model_config = SETTINGS_CONFIG

    environment: str = Field(default="development", validation_alias="SPORTSBOOK_ENV")

    @property
    def production(self) -> bool:
        return self.environment == PRODUCTION_ENVIRONMENT

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The variables given to ``read``, and nothing else (no dotenv file, no secrets directory)."""
        return (EnvironSource(settings_cls, _ENVIRON.get()),)

    @model_validator(mode="before")
    @classmethod
    def _production_has_no_development_default(cls, data: Any) -> Any:
        """In production each unset ``NO_PRODUCTION_DEFAULT`` field is refused by its own check,
        so it is named with every other problem."""
        if not isinstance(data, Mapping) or data.get("SPORTSBOOK_ENV") != PRODUCTION_ENVIRONMENT:
            return data
        unset = {
            alias: UNSET
            for field in cls.model_fields.values()
            if NO_PRODUCTION_DEFAULT in field.metadata
            and isinstance(alias := field.validation_alias, str)
            and alias not in data
        }
        return {**data, **unset}


def _bound(field: FieldInfo, kind: type) -> Any:
    return next((getattr(m, kind.__name__.lower()) for m in field.metadata if isinstance(m, kind)), None)


def _what(field: FieldInfo | None) -> str | None:
    """What a field of a built-in type must be, in the words of the message."""
    if field is None:
        return None
    annotation = field.annotation
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(str(choice) for choice in get_args(annotation))
    if annotation is int:
        return f"a whole number of at least {_bound(field, annotated_types.Ge) or 0}"
    if annotation is float:
        if _bound(field, annotated_types.Ge) == 0:
            return "a number of seconds, 0 or more"
        above = _bound(field, annotated_types.Gt)
        return "a number" if above is None else f"a number above {above}"
    return None


def _line(model: type[BaseModel], error: Any) -> str:
    by_alias = {f.validation_alias: f for f in model.model_fields.values() if isinstance(f.validation_alias, str)}
    name = next((str(part) for part in reversed(error["loc"]) if str(part) in by_alias or str(part).isupper()), None)
    name = name or ".".join(str(part) for part in error["loc"])
    ctx = error.get("ctx") or {}
    if error["type"] == "setting":
        return f"{name} {ctx['text']}"
    if error["type"] == "setting_reason":
        return f"{name}: {ctx['reason']}"
    what = _what(by_alias.get(name))
    if what is None:
        return f"{name}: {error['msg']}, got {error['input']!r}"
    return f"{name} must be {what}, got {error['input']!r}"


def config_error(model: type[BaseModel], what: str, exc: ValidationError) -> ConfigError:
    """One ``ConfigError`` naming each problem of ``exc``: "<what> is not usable:" and one line
    per problem naming its environment variable and what it must be."""
    # A default computed from another setting is not computed when any setting is refused.
    errors = [error for error in exc.errors(include_url=False) if error["type"] != "default_factory_not_called"]
    lines = list(dict.fromkeys(_line(model, error) for error in errors))
    return ConfigError(f"{what} is not usable:\n  " + "\n  ".join(lines))


Model = TypeVar("Model", bound=EnvironmentSettings)


def read(model: type[Model], environ: Mapping[str, str], what: str) -> Model:
    """``model`` read from ``environ`` and checked: a ``ConfigError`` names every problem at once."""
    token = _ENVIRON.set(environ)
    try:
        return model()
    except ValidationError as exc:
        raise config_error(model, what, exc) from None
    finally:
        _ENVIRON.reset(token)
