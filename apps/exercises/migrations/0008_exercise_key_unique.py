from django.db import migrations, models


class Migration(migrations.Migration):
    """The key is required and unique per workbook; the number is unique among active exercises only
    (a retired exercise keeps its last number, which a new one may take)."""

    dependencies = [
        ("exercises", "0007_exercise_key_fill"),
    ]

    operations = [
        migrations.AlterField(
            model_name="exercise",
            name="key",
            field=models.SlugField(
                db_index=False,
                help_text="The content file's `id:`: the exercise's identity, which renumbering leaves alone. "
                "`retired-<pk>` for an exercise retired before ids existed.",
                max_length=48,
            ),
        ),
        migrations.AlterField(
            model_name="exercise",
            name="number",
            field=models.CharField(
                help_text="As the source numbers it: 0.1, q1a. Display only; unique among active exercises.",
                max_length=16,
            ),
        ),
        migrations.RemoveConstraint(
            model_name="exercise",
            name="exercise_unique_number",
        ),
        migrations.AddConstraint(
            model_name="exercise",
            constraint=models.UniqueConstraint(fields=("workbook", "key"), name="exercise_unique_key"),
        ),
        migrations.AddConstraint(
            model_name="exercise",
            constraint=models.UniqueConstraint(
                condition=models.Q(("is_active", True)),
                fields=("workbook", "number"),
                name="exercise_unique_active_number",
            ),
        ),
    ]
