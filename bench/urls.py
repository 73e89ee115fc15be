from django.urls import URLPattern, URLResolver, include, path

from bench.views import InsertOneRowView, TrivialJsonView

urlpatterns: list[URLPattern | URLResolver] = [
    path("bench/trivial/", TrivialJsonView.as_view()),
    path("bench/insert/", InsertOneRowView.as_view()),
    path("", include("config.urls")),
]
