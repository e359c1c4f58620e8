"""Scenario 3: PostgreSQL becomes unreachable while a punter places bets.

A separate uvicorn reaches the (shared, never stopped) PostgreSQL through a TCP proxy owned by
this test; cutting the proxy closes every connection and refuses new ones, which is what the
application sees when the database goes away.

Guarantee: a bet is placed at most once, and only with its money: the placement is one
transaction (ledger entry, balance, bet, outbox record of the ``placed`` event), so a database
failure leaves none of them — the punter gets a 503 in JSON and retries with the same
idempotency key, which then places it exactly once.
"""

from __future__ import annotations

import os
import selectors
import socket
import threading
import time
import uuid
from decimal import Decimal

import pytest

from bench.harness import free_port
from odds.betting.models import Bet, LedgerEntry, Wallet
from odds.models import OutboxMessage
from tests.conftest import ROOT, wait_for
from tests.factories import market_create, user_create
from tests.integration.betting.helpers import bet_body, selections_of
from tests.integration.reliability.clients import session_for
from tests.integration.reliability.conftest import Stack, wait_web

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]


class Proxy(threading.Thread):
    """A TCP relay from a loopback port to ``target``; ``cut`` drops every connection."""

    def __init__(self, port: int, target: tuple[str, int]) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.target = target
        self.open = threading.Event()
        self.closed = threading.Event()
        self.stopped = threading.Event()

    def cut(self) -> None:
        """Drop every connection and refuse new ones; returns once both are true.

        A request sent before this returns could still reach the database and commit after its
        connection is gone; that answer is ambiguous to the application, which is why the punter
        retries with the same idempotency key. Waiting here keeps the test's request after the cut.
        """
        self.open.clear()
        if not self.closed.wait(5):
            raise RuntimeError("the proxy did not close its connections within 5 s")

    def run(self) -> None:
        while not self.stopped.is_set():
            self.open.wait(0.2)
            if self.open.is_set():
                self._serve()

    def _serve(self) -> None:
        self.closed.clear()
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.setblocking(False)
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ, None)
        pairs: dict[socket.socket, socket.socket] = {}
        try:
            while self.open.is_set() and not self.stopped.is_set():
                for key, _ in selector.select(0.1):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    if sock is listener:
                        client, _ = listener.accept()
                        upstream = socket.create_connection(self.target)
                        pairs[client], pairs[upstream] = upstream, client
                        selector.register(client, selectors.EVENT_READ, None)
                        selector.register(upstream, selectors.EVENT_READ, None)
                        continue
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    peer = pairs.get(sock)
                    if data and peer is not None:
                        peer.sendall(data)
                        continue
                    for end in (sock, peer):
                        if end is not None and end in pairs:
                            selector.unregister(end)
                            pairs.pop(end)
                            end.close()
        finally:
            for end in list(pairs):
                end.close()
            selector.close()
            listener.close()
            self.closed.set()


def test_database_down_during_bet_placement_is_a_503_and_moves_no_money(services, tmp_path, redis_client):
    from django.conf import settings

    db = settings.DATABASES["default"]
    proxy = Proxy(free_port(), (str(db["HOST"]), int(str(db["PORT"]))))
    proxy.open.set()
    proxy.start()
    stack = Stack(
        tmp_path,
        kafka=settings.KAFKA_BOOTSTRAP_SERVERS,
        redis=settings.REDIS_URL,
        namespace=os.environ["SPORTSBOOK_NAMESPACE"],
    )
    (tmp_path / "log").mkdir()
    port = free_port()
    env_db = f"postgres://{db['USER']}:{db['PASSWORD']}@127.0.0.1:{proxy.port}/{db['NAME']}"
    web = stack.process(
        "web-db",
        [
            str(ROOT / ".venv" / "bin" / "uvicorn"),
            "webapp.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--lifespan",
            "off",
            "--no-access-log",
        ],
        DATABASE_URL=env_db,
    )
    web.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_web(base, web)
        punter = user_create(balance="100.00")
        home = selections_of(market_create())[0]
        session = session_for(base, punter)
        status, _ = session.call("POST", "/api/bets", bet_body((home.id, str(home.price))))
        assert status == 201
        wallet = Wallet.objects.get(user=punter)
        before = (wallet.balance, Bet.objects.count(), LedgerEntry.objects.count(), OutboxMessage.objects.count())

        proxy.cut()
        key = uuid.uuid4().hex
        started = time.monotonic()
        status, body = session.call("POST", "/api/bets", bet_body((home.id, str(home.price)), key=key))
        answered_s = time.monotonic() - started
        assert status == 503
        assert body["error"]["code"] == "database_unavailable"
        assert "try again" in body["error"]["message"]
        wallet.refresh_from_db()
        after = (wallet.balance, Bet.objects.count(), LedgerEntry.objects.count(), OutboxMessage.objects.count())
        assert after == before
        assert not Bet.objects.filter(idempotency_key=key).exists()

        proxy.open.set()

        def placed() -> bool:
            return session.call("POST", "/api/bets", bet_body((home.id, str(home.price)), key=key))[0] in (200, 201)

        wait_for(placed, timeout=60, interval=0.5, what="placement to work again once the database is back")
        assert Bet.objects.filter(idempotency_key=key).count() == 1
        wallet.refresh_from_db()
        assert wallet.balance == Decimal("80.00")
    finally:
        web.stop()
        proxy.stopped.set()
        proxy.join(5)
    assert answered_s < 30
