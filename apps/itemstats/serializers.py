"""Typed output of the item-analysis API (``selectors.ItemAnalysis``); the admin page renders the
same dataclasses."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class AnalysisQueryIn(serializers.Serializer[Any]):
    cohort = serializers.IntegerField(
        required=False, min_value=1, max_value=2**31 - 1, help_text="A cohort you teach (its id)."
    )


class FiguresOut(serializers.Serializer[Any]):
    # Reads a selectors.Figures.
    learners = serializers.IntegerField(help_text="Engaged learners: a counted attempt, a solve or a reveal.")
    solved = serializers.IntegerField(help_text="Solved without revealing the answer first.")
    first_try = serializers.IntegerField(help_text="Solved by their first counted attempt.")
    revealed = serializers.IntegerField(help_text="Revealed the answer before solving.")
    solve_rate = serializers.FloatField(allow_null=True, help_text="solved / learners.")
    first_try_rate = serializers.FloatField(allow_null=True, help_text="first_try / learners.")
    reveal_rate = serializers.FloatField(allow_null=True, help_text="revealed / learners.")
    mean_attempts_to_solve = serializers.FloatField(allow_null=True, help_text="Over the solved learners.")
    median_attempts_to_solve = serializers.FloatField(allow_null=True, help_text="Over the solved learners.")
    discrimination = serializers.FloatField(
        allow_null=True,
        help_text="Point-biserial correlation of solved (0/1) with the learner's other solves in the scope's "
        "workbooks (this exercise excluded); null when either does not vary.",
    )
    attempts = serializers.IntegerField(help_text="Counted attempts, later rounds (new numbers, reviews) too.")
    correct = serializers.IntegerField(help_text="Of those, right.")
    accuracy = serializers.FloatField(allow_null=True, help_text="correct / attempts.")


class MistakeOut(serializers.Serializer[Any]):
    # Reads a selectors.MistakeCount.
    version = serializers.IntegerField(help_text="The exercise version whose `answer.mistakes` it indexes.")
    index = serializers.IntegerField()
    value = serializers.CharField(help_text="The mistake's formula, as the author wrote it.")
    feedback = serializers.CharField(help_text="The feedback it gives (Markdown source, as written).")
    count = serializers.IntegerField(help_text="Counted wrong attempts that matched it.")
    share_of_wrong = serializers.FloatField(allow_null=True, help_text="count / the wrong attempts in the row.")


class VariantOut(serializers.Serializer[Any]):
    # Reads a selectors.VariantFigures.
    numbers = serializers.CharField(source="label", help_text="The numbers, for a person: preset names, then givens.")
    seed = serializers.BooleanField(help_text="The seed's numbers (no drawn given this exercise shows).")
    givens = serializers.DictField(help_text="The drawn givens this exercise shows ({} for the seed's).")
    labels = serializers.DictField(child=serializers.CharField(), help_text="Preset rows' names (gpu: B200).")
    figures = FiguresOut(help_text="Learners counted on the numbers of their first counted attempt.")
    mistakes = MistakeOut(many=True, help_text="The known mistakes most often matched on these numbers.")


class ValueOut(serializers.Serializer[Any]):
    # Reads a selectors.ValueFigures.
    value = serializers.CharField(
        help_text="The given's value (a number as the variants recorded it, or a preset's name)."
    )
    figures = FiguresOut(help_text="Pooled over every variant that drew it; means and discrimination are null.")


class GivenSplitOut(serializers.Serializer[Any]):
    # Reads a selectors.GivenSplit.
    name = serializers.CharField(help_text="A varying given, or a preset (gpu).")
    spread = serializers.FloatField(
        allow_null=True, help_text="First-try rate of its easiest value minus its hardest's."
    )
    values = ValueOut(many=True, help_text="In the order of the values (numbers ascending, names alphabetical).")


class ScopeOut(serializers.Serializer[Any]):
    cohort = serializers.IntegerField(allow_null=True, help_text="null: every learner (authors, superusers).")
    cohort_name = serializers.CharField(allow_null=True)


class ItemAnalysisOut(serializers.Serializer[Any]):
    # Reads the dict apis.ItemAnalysisApi builds from a selectors.ItemAnalysis.
    workbook = serializers.CharField()
    number = serializers.CharField()
    title = serializers.CharField()
    varies = serializers.BooleanField(help_text="Its numbers vary per learner (its current version).")
    scope = ScopeOut()
    figures = FiguresOut()
    without_attempt = serializers.IntegerField(
        help_text="Engaged learners with no counted attempt (revealed without answering): in no variant."
    )
    variants = VariantOut(many=True, help_text="Hardest first (lowest share solved first try).")
    by_given = GivenSplitOut(
        many=True, help_text="Each varying given's values, variants pooled: the given whose values differ most first."
    )
    mistakes = MistakeOut(many=True, help_text="Every known mistake matched, most often first.")
