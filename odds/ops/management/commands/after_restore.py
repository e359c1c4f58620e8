from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from odds.ops.services import restore
from odds.ops.services.restore import INCOMPLETE, StepReport

STEPS = ("outbox", "bets", "liability", "store")


def _time(text: str) -> datetime:
    try:
        found = datetime.fromisoformat(text)
    except ValueError as exc:
        raise CommandError(f"--since: not an ISO time with an offset: {text!r}") from exc
    if found.tzinfo is None:
        raise CommandError("--since needs an offset, e.g. 2026-11-28T10:15:00+00:00")
    return found


class Command(BaseCommand):
    help = (
        "After PostgreSQL is restored (make restore): relay the outbox once, dead-letter the bet events "
        "the database does not hold, rebuild liability and check the reducers' Redis store. Idempotent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", help="read Kafka from this time (default: 5 minutes before the newest write)")
        parser.add_argument("--skip", action="append", choices=STEPS, default=[], help="leave a step out")
        parser.add_argument("--rebuild-store", action="store_true", help="have the reducers rebuild Redis from Kafka")
        parser.add_argument("--wait", type=float, default=120.0, help="seconds to wait for the reducers, per step")

    def handle(self, *args: Any, **options: Any) -> None:
        skip = set(options["skip"])
        since = _time(options["since"]) if options["since"] else None
        point = restore.restore_point()
        self.stdout.write(f"restore point (newest write in the database): {point.isoformat() if point else 'none'}")
        reports: dict[str, StepReport] = {}
        verdicts: list[Any] = []
        started = time.monotonic()
        if "outbox" not in skip:
            reports["outbox"] = self._run("outbox", restore.outbox_reconcile)
        if "bets" not in skip:
            start = restore.scan_start(since=since)
            self.stdout.write(f"bets: reading the bets topic from {start.isoformat()}")
            check = restore.bets_reconcile(since=start)
            verdicts = check.verdicts
            reports["bets"] = self._show("bets", check.report)
        if "liability" not in skip:
            reports["liability"] = self._run(
                "liability", lambda: restore.liability_rebuild(verdicts=verdicts, wait_s=options["wait"])
            )
        if "store" not in skip:
            reports["store"] = self._run(
                "store", lambda: restore.store_rebuilt(rebuild=options["rebuild_store"], wait_s=options["wait"])
            )
        incomplete = [name for name, report in reports.items() if report.status == INCOMPLETE]
        self.stdout.write(f"after_restore: {len(reports)} steps in {time.monotonic() - started:.1f} s")
        if incomplete:
            raise CommandError(f"incomplete: {', '.join(incomplete)} (run after_restore again once resolved)")

    def _run(self, name: str, step: Any) -> StepReport:
        return self._show(name, step())

    def _show(self, name: str, report: StepReport) -> StepReport:
        figures = ", ".join(f"{k} {v}" for k, v in report.figures.items())
        self.stdout.write(f"{name}: {report.status}{': ' + figures if figures else ''}")
        if report.note:
            self.stdout.write(f"{name}: {report.note}")
        return report
