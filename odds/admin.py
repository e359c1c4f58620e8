from django.contrib import admin

from odds.models import Competition, Event, Market, Selection, Sport


@admin.register(Sport)
class SportAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "display_order")
    search_fields = ("name",)


@admin.register(Competition)
class CompetitionAdmin(admin.ModelAdmin):
    list_display = ("name", "sport", "country")
    list_filter = ("sport",)
    search_fields = ("name",)


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("__str__", "competition", "starts_at", "status", "home_score", "away_score")
    list_filter = ("status", "competition__sport", "competition")
    search_fields = ("home", "away", "competition__name")
    date_hierarchy = "starts_at"


class SelectionInline(admin.TabularInline):
    model = Selection
    extra = 0


@admin.register(Market)
class MarketAdmin(admin.ModelAdmin):
    list_display = ("__str__", "kind", "status", "version")
    list_filter = ("status", "kind", "event__competition__sport")
    search_fields = ("name", "event__home", "event__away")
    inlines = [SelectionInline]


@admin.register(Selection)
class SelectionAdmin(admin.ModelAdmin):
    list_display = ("name", "market", "price", "status", "result")
    list_filter = ("status", "result")
    search_fields = ("name", "market__event__home", "market__event__away")
