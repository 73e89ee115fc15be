"""The assessments pages (learners)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
