from django.apps import AppConfig


class ItemstatsConfig(AppConfig):
    """Item analysis for instructors and authors: per exercise, the share solved first try,
    attempts to solve, reveal rate and discrimination, whole and by variant, with the known
    mistakes most often matched. Reads only (``selectors``); beside ``assessments`` at the top of
    the layers: it reads progress and exercises, and nothing imports it."""

    name = "apps.itemstats"
    label = "itemstats"
    verbose_name = "Item analysis"
