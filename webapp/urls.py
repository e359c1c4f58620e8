from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("odds.urls")),
]

handler403 = "odds.views.errors.forbidden"
handler404 = "odds.views.errors.not_found"
handler500 = "odds.views.errors.server_error"
