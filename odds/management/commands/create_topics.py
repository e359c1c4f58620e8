from typing import Any

from django.core.management.base import BaseCommand

from odds.core.kafka import topics_ensure


class Command(BaseCommand):
    help = "Create the Kafka topics with their configured partition counts (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        for name, outcome in sorted(topics_ensure().items()):
            self.stdout.write(f"{name}: {outcome}")
