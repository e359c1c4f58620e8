"""Websocket handshakes admitted a few at a time in each web process, first come first served.

A crowd's handshakes arrive together: at kick-off, or every client of a process reconnecting after
a restart. Each handshake's work (the session and user read, the origin check, the connection
caps' script, the hub's join, the ``hello``) is a handful of awaits; with thousands in flight at
once each one's steps queue behind every other's, so they all finish late together, and the ASGI
server closes every handshake the application has not accepted within its opening timeout (10 s
for uvicorn's websockets). Admitted ``WS_HANDSHAKES_AT_ONCE`` at a time, each finishes at the
process's pace and the rest wait their turn, in the order they came: in a storm the process opens
sockets at its full rate from the first second, instead of opening few or none.

A handshake that waited ``WS_HANDSHAKE_WAIT_S`` for its turn (the server's opening timeout,
10 s) is answered at once with a close (1013, "try again later") and no work: the server has
closed its connection by then, and the work would be taken from the handshakes that can still
open. Without that bound, a storm longer than the process can serve would fill the queue with
handshakes nobody waits for any more. The browser's client tries again after a pause.

A handshake leaves its place when the application says it is done (``scope["handshake_done"]``,
called by the consumer once its ``hello`` or its refusal is sent) or ends, whichever comes first.
``send`` is not wrapped: the socket's frames go straight to the server.
"""

from __future__ import annotations

import asyncio
from typing import Any

# RFC 6455: the server is overloaded; the client may try again later.
TRY_AGAIN_LATER = 1013


class HandshakeAdmission:
    """ASGI middleware: at most ``at_once`` websocket handshakes in the application at a time
    (0: no limit); other scopes pass straight through."""

    def __init__(self, inner: Any, *, at_once: int, wait_s: float) -> None:
        self.inner = inner
        self.at_once = at_once
        self.wait_s = wait_s
        self.slots: asyncio.Semaphore | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def _slots(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self.slots is None or self.loop is not loop:
            self.slots, self.loop = asyncio.Semaphore(self.at_once), loop
        return self.slots

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket" or self.at_once <= 0:
            return await self.inner(scope, receive, send)
        slots = self._slots()
        try:
            await asyncio.wait_for(slots.acquire(), timeout=self.wait_s)
        except TimeoutError:
            await send({"type": "websocket.close", "code": TRY_AGAIN_LATER})
            return None
        held = True

        def leave() -> None:
            nonlocal held
            if held:
                held = False
                slots.release()

        try:
            scope["handshake_done"] = leave  # in place: see webapp/wsauth.py on the socket's scope
            return await self.inner(scope, receive, send)
        finally:
            leave()
