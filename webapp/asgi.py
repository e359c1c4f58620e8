"""ASGI entry point: HTTP through Django (bet placement on the event loop first, see
odds/api/placement.py), websockets through Channels.

Django is set up before anything imports models (the order the Channels docs prescribe).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter

from odds.api.placement import PlacementEndpoint
from odds.streaming.routing import websocket_urlpatterns
from webapp.origins import OriginValidator
from webapp.wsauth import WebsocketAuthStack

placement = PlacementEndpoint(django_asgi_app)

application = ProtocolTypeRouter(
    {
        "http": placement,
        # Servers that speak the lifespan protocol (uvicorn) start each process with its bet pool full.
        "lifespan": placement.lifespan,
        "websocket": OriginValidator(WebsocketAuthStack(URLRouter(websocket_urlpatterns))),
    }
)
