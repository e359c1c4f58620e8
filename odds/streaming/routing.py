from django.urls import path

from odds.streaming.consumers import OddsConsumer

websocket_urlpatterns = [
    path("ws/odds/", OddsConsumer.as_asgi()),
]
