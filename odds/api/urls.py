"""The routes of the JSON APIs under ``/api/``, each from its endpoint's declaration
(``odds/api/api.py``)."""

from odds.api.api import urlpatterns_under

app_name = "api"

urlpatterns = urlpatterns_under("api/", relative=True)
