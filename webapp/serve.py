"""The ASGI server `make up` runs: ``python -m webapp.serve``.

uvicorn with ``WEB_WORKERS`` worker processes on ``WEB_HOST``:``WEB_PORT``, the websockets
protocol, the lifespan protocol (each worker fills its bet pool before it takes requests, see
``PlacementEndpoint.lifespan``), no access log, and the server's own websocket message limit
set to ``settings.WS_MAX_FRAME_BYTES``: a larger frame is refused by the server (close 1009)
before it is read in full, so it never reaches the application. ``X-Forwarded-For`` is read only
from ``TRUSTED_PROXIES`` (none by default).

uvicorn's master restarts a worker that dies; the process supervisor (supervisord) restarts the
master. A worker ends when its master dies, so a restarted master finds the port free.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# prctl(2) option: the signal the kernel sends a process when its parent exits.
PR_SET_PDEATHSIG = 1


def _end_with_parent() -> None:
    """Have the kernel send SIGTERM to this process when its parent (uvicorn's master) exits.

    Without it a worker outlives a killed master and keeps the listening socket, and the master
    supervisord starts next cannot bind the port.
    """
    parent = multiprocessing.parent_process()
    if parent is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
        return
    if os.getppid() != parent.pid:  # the master died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def application_load() -> Any:
    """uvicorn's application factory, called once in every server process."""
    _end_with_parent()
    from webapp.asgi import application

    return application


def main() -> None:
    import uvicorn
    from django.conf import settings

    uvicorn.run(
        "webapp.serve:application_load",
        factory=True,
        host=settings.WEB_HOST,
        port=settings.WEB_PORT,
        workers=settings.WEB_WORKERS,
        ws="websockets",
        ws_max_size=settings.WS_MAX_FRAME_BYTES,
        lifespan="on",
        access_log=False,
        # X-Forwarded-For is believed only from these proxies (and then its rightmost address no
        # trusted proxy added is the client's): a direct client cannot choose its address.
        proxy_headers=True,
        forwarded_allow_ips=settings.TRUSTED_PROXIES,
    )


if __name__ == "__main__":
    main()
