"""What every page of one punter's own data carries."""

from __future__ import annotations

from django.views.decorators.cache import cache_control

# A page of one punter's money or bets: no shared cache keeps it, and no browser keeps a copy
# (the back button or a shared computer must not show it after logout).
private_page = cache_control(private=True, no_store=True)
