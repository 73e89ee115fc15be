"""No tables of its own: item analysis reads attempts and progress. ``ItemAnalysis`` is a proxy of
``Exercise`` so that the admin lists the exercises an instructor or author may analyse under its
own heading ("Item analysis"), each row opening its analysis page."""

from __future__ import annotations

from apps.exercises.models import Exercise


class ItemAnalysis(Exercise):
    class Meta:
        proxy = True
        verbose_name = "item analysis"
        verbose_name_plural = "item analysis"
        default_permissions = ("view",)
