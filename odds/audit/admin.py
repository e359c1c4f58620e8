"""The audit log in the admin (read only: the database refuses changes anyway), and the base of
every admin page whose edits are staff actions: each add, change and delete is an audit row in the
admin's own transaction."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Model, QuerySet
from django.forms.models import BaseInlineFormSet, model_to_dict
from django.http import HttpRequest

from odds.audit.models import AuditEntry
from odds.audit.services.audit import audit_record
from odds.core.admin import IdCheckedAdmin, ReadOnlyAdmin


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    list_display = ("at", "actor", "kind", "object_type", "object_id", "object_label", "reason")
    list_filter = ("kind", "object_type", "at")
    search_fields = ("actor", "object_label", "=object_id", "reason")
    date_hierarchy = "at"


def _changes(form: forms.ModelForm) -> tuple[dict[str, Any], dict[str, Any]]:
    before = {name: form.initial.get(name) for name in form.changed_data}
    after = {name: form.cleaned_data.get(name) for name in form.changed_data}
    return before, after


class AuditedAdmin(IdCheckedAdmin):
    """An admin page whose saves and deletes (inline rows included) are audited."""

    def save_model(self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        self._audit_form(request, obj, form, change)

    def _audit_form(self, request: HttpRequest, obj: Model, form: forms.ModelForm, change: bool) -> None:
        if change and not form.changed_data:
            return
        before, after = _changes(form) if change else ({}, model_to_dict(obj))
        kind = AuditEntry.Kind.ADMIN_CHANGE if change else AuditEntry.Kind.ADMIN_ADD
        audit_record(by=request.user, kind=kind, obj=obj, before=before, after=after)

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        audit_record(by=request.user, kind=AuditEntry.Kind.ADMIN_DELETE, obj=obj, before=model_to_dict(obj))
        super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for obj in queryset:
            audit_record(by=request.user, kind=AuditEntry.Kind.ADMIN_DELETE, obj=obj, before=model_to_dict(obj))
        super().delete_queryset(request, queryset)

    def save_formset(
        self, request: HttpRequest, form: forms.ModelForm, formset: BaseInlineFormSet, change: bool
    ) -> None:
        deleted = [f.instance for f in formset.deleted_forms if f.instance.pk is not None]
        for obj in deleted:
            audit_record(by=request.user, kind=AuditEntry.Kind.ADMIN_DELETE, obj=obj, before=model_to_dict(obj))
        super().save_formset(request, form, formset, change)
        for inline in formset.forms:
            if inline in formset.deleted_forms or not inline.has_changed() or inline.instance.pk is None:
                continue
            added = inline.instance in formset.new_objects
            self._audit_form(request, inline.instance, inline, not added)
