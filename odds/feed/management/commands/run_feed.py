from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from odds.feed.services.feed import FeedRunner, replay


class Command(BaseCommand):
    help = "Simulate the odds feed: move open markets' books and produce price updates to Kafka."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rate", type=float, default=50.0, help="price updates per second")
        parser.add_argument("--markets", type=int, default=1000, help="how many open markets to move")
        parser.add_argument("--duration", type=float, default=None, help="seconds to run (default: forever)")
        parser.add_argument("--seed", type=int, default=None, help="random seed for a deterministic walk")
        parser.add_argument(
            "--record", type=Path, default=None, help="also write every update to this file, one JSON record a line"
        )
        parser.add_argument("--replay", type=Path, default=None, help="produce the updates recorded in this file")
        parser.add_argument(
            "--speed", type=float, default=1.0, help="match clock speed-up (60: a football match lasts about 95 s)"
        )
        parser.add_argument(
            "--no-lifecycle", action="store_true", help="only move prices: no kick-offs, scores or full time"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["rate"] <= 0:
            raise CommandError("--rate must be positive")
        if options["speed"] <= 0:
            raise CommandError("--speed must be positive")
        if options["replay"] is not None:
            sent = replay(path=options["replay"], rate=options["rate"])
            self.stdout.write(f"replayed {sent} updates")
            return
        record = options["record"].open("wb") if options["record"] else None
        try:
            runner = FeedRunner(
                rate=options["rate"],
                markets=options["markets"],
                seed=options["seed"],
                record=record,
                speed=options["speed"],
                lifecycle=not options["no_lifecycle"],
            )
            runner.run(duration=options["duration"], out=self.stdout)
        except RuntimeError as exc:
            raise CommandError(str(exc)) from exc
        except KeyboardInterrupt:
            pass
        finally:
            if record is not None:
                record.close()
