"""The pub-sub connection's protocol: Redis's replies parsed where they arrive, with no Redis."""

from __future__ import annotations

import asyncio

import hiredis

from store.subscription import _command, _Reader


class _Replaced(asyncio.Protocol):
    """The protocol the reader replaced: it must still hear the connection's end and flow control."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, object]] = []

    def connection_lost(self, exc: object) -> None:
        self.calls.append(("lost", exc))

    def eof_received(self) -> bool:
        self.calls.append(("eof", None))
        return True

    def pause_writing(self) -> None:
        self.calls.append(("pause", None))

    def resume_writing(self) -> None:
        self.calls.append(("resume", None))


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.protocol = _Replaced()
        self.closed = False

    def get_protocol(self) -> _Replaced:
        return self.protocol

    def close(self) -> None:
        self.closed = True


def _message(channel: bytes, data: bytes) -> bytes:
    return b"*3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(channel), channel, len(data), data)


SUBSCRIBED = b"*3\r\n$9\r\nsubscribe\r\n$4\r\nm:01\r\n:1\r\n"
PONG = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
UNSUBSCRIBED = b"*3\r\n$11\r\nunsubscribe\r\n$4\r\nm:01\r\n:0\r\n"


_LOOP = asyncio.new_event_loop()  # futures need a loop; none runs in these tests


def teardown_module() -> None:
    _LOOP.close()


def _reader(on_message) -> tuple[_Reader, _Transport, asyncio.Future[None]]:
    lost: asyncio.Future[None] = _LOOP.create_future()
    transport = _Transport()
    return _Reader(transport, on_message, lost), transport, lost


STREAM = (
    SUBSCRIBED
    + _message(b"m:01", b'{"price":"2.50"}')
    + PONG
    + _message(b"m:02", b"")
    + _message(b"m:01", "é\r\n*3".encode())
    + UNSUBSCRIBED
)
EXPECTED = [(b"m:01", b'{"price":"2.50"}'), (b"m:02", b""), (b"m:01", "é\r\n*3".encode())]


def test_messages_cut_anywhere_are_handed_on_once_in_order_and_nothing_else_is():
    for cut in range(1, len(STREAM)):
        got: list[tuple[bytes, bytes]] = []
        reader, transport, _ = _reader(lambda channel, data, got=got: got.append((channel, data)))
        reader.data_received(STREAM[:cut])
        reader.data_received(STREAM[cut:])
        assert got == EXPECTED, f"cut after byte {cut}"
        assert not transport.closed
        assert reader.heard


def test_every_message_of_one_read_is_handed_on():
    got: list[tuple[bytes, bytes]] = []
    reader, _, _ = _reader(lambda channel, data: got.append((channel, data)))
    reader.data_received(STREAM)
    assert got == EXPECTED


def test_a_listener_that_fails_costs_its_own_message_only():
    got: list[bytes] = []

    def on_message(channel: bytes, data: bytes) -> None:
        if data == b"boom":
            raise RuntimeError("a listener's fault")
        got.append(data)

    reader, transport, lost = _reader(on_message)
    reader.data_received(_message(b"m:01", b"one") + _message(b"m:01", b"boom") + _message(b"m:01", b"two"))
    assert got == [b"one", b"two"]
    assert not transport.closed
    assert not lost.done()


def test_bytes_that_are_not_redis_protocol_close_the_connection_and_its_end_is_reported():
    got: list[bytes] = []
    reader, transport, lost = _reader(lambda channel, data: got.append(data))
    reader.data_received(_message(b"m:01", b"one") + b"?not redis\r\n")
    assert got == [b"one"]
    assert transport.closed
    assert not lost.done()  # reported by the transport's connection_lost, which follows the close
    reader.connection_lost(None)
    assert lost.done()
    assert transport.protocol.calls == [("lost", None)]


def test_an_error_reply_is_not_a_message():
    got: list[bytes] = []
    reader, transport, _ = _reader(lambda channel, data: got.append(data))
    reader.data_received(b"-ERR unknown command\r\n" + _message(b"m:01", b"after"))
    assert got == [b"after"]
    assert not transport.closed


def test_the_end_flow_control_and_eof_still_reach_the_replaced_protocol():
    reader, transport, lost = _reader(lambda channel, data: None)
    reader.pause_writing()
    reader.resume_writing()
    assert reader.eof_received() is False  # the transport closes: the server ended the connection
    error = ConnectionResetError("reset by peer")
    reader.connection_lost(error)
    assert transport.protocol.calls == [("pause", None), ("resume", None), ("eof", None), ("lost", error)]
    assert lost.done()


def test_commands_are_written_in_redis_protocol():
    parser = hiredis.Reader()
    parser.feed(_command(b"SUBSCRIBE", b"odds:m:1", "é".encode(), b""))
    assert parser.gets() == [b"SUBSCRIBE", b"odds:m:1", "é".encode(), b""]
    assert parser.gets() is False
