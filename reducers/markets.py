"""The markets table's decisions: what each record of the compacted markets topic does to it.

A definition is written when its version is newer than the stored one; a tombstone removes the
market and leaves a closed marker, so a price arriving after it is not tradable. The decisions
of a batch are taken in the batch's order against the table as the batch leaves it, so two
records of one market in one batch are decided as if applied one after the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from reducers.schemas import MarketDefinition

Outcome = Literal["removed", "stale", "upserted", "status_changed"]


@dataclass(frozen=True)
class StoredDefinition:
    """What the table holds of a market: its version and status (``None`` when absent; a removed
    market has no version and the status ``closed``)."""

    version: int | None = None
    status: str | None = None


@dataclass(frozen=True)
class WriteDefinition:
    """Replace the market's row with ``definition`` and index it under its event; for ``None``
    (a tombstone) drop the market from the table, leaving a closed marker in its place."""

    market_id: int
    definition: MarketDefinition | None


@dataclass(frozen=True)
class DefinitionChange:
    """The decision on one record: its outcome and the write it needs (none when stale)."""

    market_id: int
    outcome: Outcome
    effect: WriteDefinition | None

    @property
    def releases_kept_price(self) -> bool:
        """A price kept while the market was unknown may now be applied. A stale definition
        releases it too: the batch may be a replay after a crash between writing the definition
        and applying the price."""
        return self.outcome != "removed"

    @property
    def restates(self) -> bool:
        """The market's status changed, so its applied state carries an old verdict."""
        return self.outcome in ("removed", "status_changed")


def definition_change(
    market_id: int, definition: MarketDefinition | None, stored: StoredDefinition
) -> DefinitionChange:
    """What one record (a definition, or ``None`` for a tombstone) does to the table."""
    if definition is None:
        return DefinitionChange(market_id, "removed", WriteDefinition(market_id, None))
    if stored.version is not None and stored.version >= definition.version:
        return DefinitionChange(market_id, "stale", None)
    outcome: Outcome = "status_changed" if stored.status != definition.status else "upserted"
    return DefinitionChange(market_id, outcome, WriteDefinition(market_id, definition))


def stored_after(change: DefinitionChange, before: StoredDefinition) -> StoredDefinition:
    """What the table holds of the market once the change is applied."""
    if change.effect is None:
        return before
    definition = change.effect.definition
    if definition is None:
        return StoredDefinition(version=None, status="closed")
    return StoredDefinition(version=definition.version, status=definition.status)


@dataclass
class TablePlan:
    """The decisions on a batch of the markets topic, in order, and what follows from them."""

    changes: list[DefinitionChange] = field(default_factory=list)

    @property
    def released(self) -> list[int]:
        """Markets whose kept prices may be applied, in first-seen order, each once."""
        return list(dict.fromkeys(c.market_id for c in self.changes if c.releases_kept_price))

    @property
    def restated(self) -> list[int]:
        """Markets whose status changed, in first-seen order, each once."""
        return list(dict.fromkeys(c.market_id for c in self.changes if c.restates))

    def counts(self) -> dict[str, int]:
        counts = {"upserted": 0, "removed": 0, "stale": 0}
        for change in self.changes:
            counts["upserted" if change.outcome == "status_changed" else change.outcome] += 1
        return counts


def plan_table(
    records: Iterable[tuple[int, MarketDefinition | None]], stored: Mapping[int, StoredDefinition]
) -> TablePlan:
    """Decide a batch of (market id, definition or tombstone) records, in order, against the
    table as it stood before the batch (``stored``; markets missing from it are absent)."""
    current = dict(stored)
    plan = TablePlan()
    for market_id, definition in records:
        before = current.get(market_id, StoredDefinition())
        change = definition_change(market_id, definition, before)
        current[market_id] = stored_after(change, before)
        plan.changes.append(change)
    return plan
