from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand

from odds.core.outbox import outbox_drain, outbox_pending_count


class Command(BaseCommand):
    help = "Produce pending outbox records to Kafka (acks=all) and mark them sent; runs until stopped."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--once", action="store_true", help="relay what is pending now, then exit")
        parser.add_argument("--interval", type=float, default=0.2, help="seconds between polls when idle")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["once"]:
            sent = failed = 0
            while True:
                result = outbox_drain(budget_s=60)
                sent, failed = sent + result.sent, failed + result.failed
                if result.busy or result.failed or not result.sent:
                    break
            self.stdout.write(f"outbox: {sent} sent, {failed} failed, {outbox_pending_count()} pending")
            return
        sent = 0
        last_report = time.monotonic()
        try:
            while True:
                result = outbox_drain(budget_s=1.0)
                sent += result.sent
                if time.monotonic() - last_report >= 5:
                    self.stdout.write(f"outbox: {sent} sent, {outbox_pending_count()} pending")
                    last_report = time.monotonic()
                if not result.sent:
                    time.sleep(options["interval"])
        except KeyboardInterrupt:
            self.stdout.write(f"outbox: {sent} sent")
