"""Writing the audit log. Every staff action calls ``audit_record`` inside its own transaction, so
the row commits with the change or not at all."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Model

from odds.audit.models import AuditEntry

Actor = User | AnonymousUser | str | None


def _plain(value: Any) -> Any:
    """A value as JSON keeps it: decimals as text (exact), everything else as its text unless JSON
    has it already."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def staff_actor(by: Actor) -> User | None:
    """The staff member behind a change, or None when a process made it (the feed, a task, a
    command): only people's actions are audited."""
    if isinstance(by, User) and by.is_authenticated:
        return by
    return None


def audit_record(
    *,
    by: Actor,
    kind: str,
    obj: Model | None = None,
    object_type: str = "",
    object_id: str | int = "",
    label: str = "",
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
    reason: str = "",
) -> AuditEntry | None:
    """Append one row for a staff action to the audit log, in the caller's transaction (which must
    be open: the row commits with the action). ``obj`` names the object (its model and id), or
    ``object_type`` and ``object_id`` do. A change by a process rather than a person records
    nothing and returns None."""
    user = staff_actor(by)
    if user is None:
        return None
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit_record must run inside the action's transaction")
    if obj is not None:
        object_type = object_type or obj._meta.model_name or ""
        object_id = obj.pk
        label = label or str(obj)
    return AuditEntry.objects.create(
        actor=user.get_username(),
        actor_id=user.pk,
        kind=AuditEntry.Kind(kind),
        object_type=object_type,
        object_id=str(object_id),
        object_label=label[:255],
        before=_plain(dict(before or {})),
        after=_plain(dict(after or {})),
        reason=reason,
    )
