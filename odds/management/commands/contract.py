from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from odds.api.contract import contract_files, stale_files


class Command(BaseCommand):
    help = (
        "The browser's contract types (frontend/src/contract/), generated from the API's pydantic schemas "
        "and the websocket frames: --write them, or --check that they are current."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--write", action="store_true", help="write the generated files")
        action.add_argument("--check", action="store_true", help="fail when a file is not what the schemas give")

    def handle(self, *args: Any, **options: Any) -> None:
        files = contract_files()
        stale = stale_files(files)
        if options["check"]:
            if stale:
                names = ", ".join(str(path) for path in stale)
                raise CommandError(f"not current: {names}; run `make contract`")
            return
        for path in stale:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(files[path])
            self.stdout.write(f"wrote {path}")
