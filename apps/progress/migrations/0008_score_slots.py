"""Rank slots: the learners holding a score on a global board, split by the UTC day, hour and
minute they reached it (``ScoreSlot``), so "tied with me and ahead of me" is a sum.

Online at scale: the new table is filled from ``progress_score`` in one set-based statement per
span while ``progress_scorebucket`` is locked EXCLUSIVE: readers (boards, ranks) go on, and a
learner's solve that moves a global score waits at its bucket write until this commits (then
adds its own change to the slots counted here). ``progress_score`` itself is only read. Measured
with ``bench/leaderboard.py``'s 1M-learner database (README, "Leaderboards and streaks").
"""

from typing import Any

from django.db import migrations, models

FILL = [
    "LOCK TABLE progress_scorebucket IN EXCLUSIVE MODE",
    *(
        f"""INSERT INTO progress_scoreslot (board, points, span, start, learners)
        SELECT board, points, {span}, date_trunc('{unit}', reached_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*)
        FROM progress_score WHERE NOT hidden AND board NOT LIKE 'cohort:%' GROUP BY 1, 2, 4"""
        for span, unit in ((86400, "day"), (3600, "hour"), (60, "minute"))
    ),
]


def fill(apps: Any, schema_editor: Any) -> None:
    """PostgreSQL only: elsewhere (the embedded SQLite default) the rank counts ties row by row."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for sql in FILL:
            cursor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ('progress', '0007_reviews'),
    ]

    operations = [
        migrations.CreateModel(
            name='ScoreSlot',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('board', models.CharField(max_length=48)),
                ('points', models.PositiveIntegerField()),
                ('span', models.PositiveIntegerField(help_text='Seconds: 86400, 3600 or 60.')),
                ('start', models.DateTimeField(help_text="The slot's first instant, on a UTC boundary of its span.")),
                ('learners', models.IntegerField(default=0)),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('board', 'points', 'span', 'start'), name='slot_unique_board_points_span'), models.CheckConstraint(condition=models.Q(('learners__gte', 0)), name='slot_learners_nonnegative')],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
