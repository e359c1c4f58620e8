"""The ASGI server `make up` runs: ``python -m webapp.serve``.

uvicorn with ``WEB_WORKERS`` worker processes on ``WEB_HOST``:``WEB_PORT``, the websocket
protocol ``WS_PROTOCOL`` (uvicorn's sans-I/O "websockets-sansio" by default), the lifespan protocol
(each worker fills its bet pool before it takes requests, see ``PlacementEndpoint.lifespan``),
no access log, and the server's own websocket message limit set to
``settings.WS_MAX_FRAME_BYTES``: a larger frame is refused by the server (close 1009) before it
is read in full, so it never reaches the application. ``X-Forwarded-For`` is read only from
``TRUSTED_PROXIES`` (none by default).

uvicorn's master restarts a worker that dies; the process supervisor (supervisord) restarts the
master. A worker ends when its master dies, so a restarted master finds the port free.

A socket is a file descriptor: before it listens, the server raises its own limit of open
files to ``WEB_OPEN_FILES`` (the hard limit too when it may; otherwise at most the hard limit the
host allows, and it says so), and listens with a backlog of ``WEB_BACKLOG`` pending connections (the kernel caps it at
``net.core.somaxconn``). docs/reliability.md, "A host for many sockets", names the kernel
settings a production host needs.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from webapp.collector import settle

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

# prctl(2) option: the signal the kernel sends a process when its parent exits.
PR_SET_PDEATHSIG = 1
SOMAXCONN = Path("/proc/sys/net/core/somaxconn")


def open_files_raise(*, wanted: int) -> tuple[int, int]:
    """Raise this process's soft limit of open files towards ``wanted``, never lowering it;
    the hard limit too when the process may (root, or ``CAP_SYS_RESOURCE``), else the soft limit
    stops at the hard one. Returns the (soft, hard) limits in force afterwards. Children
    (uvicorn's workers) inherit them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < wanted:
        with contextlib.suppress(ValueError, OSError):  # not allowed: the soft limit only
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), wanted))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def host_limits_report(*, wanted_files: int, backlog: int) -> list[str]:
    """Raise the open-files limit and return a warning for every host limit below what the
    server is configured for (logged at start, so an operator sees the first wall before the
    sockets meet it)."""
    soft, hard = open_files_raise(wanted=wanted_files)
    warnings = []
    if soft < wanted_files:
        warnings.append(
            f"open files limited to {soft} (hard limit {hard}), below WEB_OPEN_FILES={wanted_files}: "
            "each websocket holds one; raise the hard limit (LimitNOFILE, limits.conf)"
        )
    try:
        somaxconn = int(SOMAXCONN.read_text())
    except (OSError, ValueError):
        somaxconn = None
    if somaxconn is not None and somaxconn < backlog:
        warnings.append(
            f"net.core.somaxconn={somaxconn} caps the listen backlog below WEB_BACKLOG={backlog}: "
            "connections beyond it are dropped in a reconnect storm"
        )
    return warnings


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
    from django.conf import settings

    from webapp.asgi import application

    # webapp/collector.py: start-up objects and every collection's survivors out of the
    # collector's reach, a full collection at WEB_GC_FULL_GROWTH of the process's memory.
    settle(young=settings.WEB_GC_YOUNG, growth=settings.WEB_GC_FULL_GROWTH)
    return application


def main() -> None:
    import uvicorn
    from django.conf import settings

    for warning in host_limits_report(wanted_files=settings.WEB_OPEN_FILES, backlog=settings.WEB_BACKLOG):
        print(f"WARNING host limit: {warning}", file=sys.stderr, flush=True)
    uvicorn.run(
        "webapp.serve:application_load",
        factory=True,
        host=settings.WEB_HOST,
        port=settings.WEB_PORT,
        workers=settings.WEB_WORKERS,
        backlog=settings.WEB_BACKLOG,
        ws=settings.WS_PROTOCOL,
        ws_max_size=settings.WS_MAX_FRAME_BYTES,
        ws_per_message_deflate=settings.WS_PER_MESSAGE_DEFLATE,
        lifespan="on",
        access_log=False,
        # X-Forwarded-For is believed only from these proxies (and then its rightmost address no
        # trusted proxy added is the client's): a direct client cannot choose its address.
        proxy_headers=True,
        forwarded_allow_ips=settings.TRUSTED_PROXIES,
    )


if __name__ == "__main__":
    main()
