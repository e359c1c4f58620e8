from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from odds.services.health import health_report


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)
