"""ASGI entry point: HTTP through Django (bet placement on the event loop first, see
odds/api/placement.py), websockets through Channels.

Django is set up before anything imports models (the order the Channels docs prescribe).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter
from django.conf import settings

from odds.api.placement import PlacementEndpoint
from odds.streaming.routing import SocketRouter, websocket_urlpatterns
from webapp.admission import HandshakeAdmission
from webapp.origins import OriginValidator
from webapp.wsauth import WebsocketAuthStack

placement = PlacementEndpoint(django_asgi_app)

application = ProtocolTypeRouter(
    {
        "http": placement,
        # Servers that speak the lifespan protocol (uvicorn) start each process with its bet pool full.
        "lifespan": placement.lifespan,
        # Handshakes a few at a time (webapp/admission.py); each reads its session and user on
        # the bets' asyncio pool (webapp/wsauth.py).
        "websocket": HandshakeAdmission(
            OriginValidator(WebsocketAuthStack(SocketRouter(websocket_urlpatterns), placement.connection)),
            at_once=settings.WS_HANDSHAKES_AT_ONCE,
            wait_s=settings.WS_HANDSHAKE_WAIT_S,
        ),
    }
)
