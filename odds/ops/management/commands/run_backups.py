from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from odds.ops.services.backups import backups_tick


class Command(BaseCommand):
    help = (
        "Take a full PostgreSQL backup (pgBackRest) whenever the newest is older than BACKUP_FULL_INTERVAL_H, "
        "and keep the repository's state for /metrics and the ops pages; runs until stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="check (and back up if due) once, then exit")

    def handle(self, *args: Any, **options: Any) -> None:
        interval_s = float(settings.BACKUP_FULL_INTERVAL_H) * 3600
        while True:
            status = backups_tick(interval_s=interval_s)
            if status["error"]:
                self.stdout.write(f"backups: {status['error']}")
            else:
                self.stdout.write(
                    f"backups: {status['backups']} kept, newest {status.get('newest_label', 'none')}, "
                    f"{status['repository_bytes']} bytes, WAL {status['wal_min']}..{status['wal_max']}"
                )
            if options["once"]:
                return
            time.sleep(settings.BACKUP_CHECK_INTERVAL_S)
