"""The admin's base classes: actions that check their ids, and read-only pages for rows only the
services write."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from odds.core.text import id_from_text


class IdCheckedAdmin(admin.ModelAdmin):
    """Actions run only on a selection of ids: a selected value that is not an id (a form edited
    by hand) is refused with a message before the query, which would fail on it. Its lists and
    forms carry the site's admin style."""

    change_list_template = "admin/odds/change_list.html"
    change_form_template = "admin/odds/change_form.html"

    def response_action(
        self, request: HttpRequest, queryset: QuerySet[Any], *args: Any, **kwargs: Any
    ) -> HttpResponse | None:
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if any(id_from_text(text=value) is None for value in selected):
            self.message_user(request, "The selection is not a list of row ids; nothing was changed.", messages.ERROR)
            return None
        return super().response_action(request, queryset, *args, **kwargs)


class ReadOnlyAdmin(IdCheckedAdmin):
    """Rows written only by services (ledger, outbox, bets): viewable, never edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
