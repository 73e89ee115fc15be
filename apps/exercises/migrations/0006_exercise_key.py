from django.db import migrations, models


class Migration(migrations.Migration):
    """Exercise.key, the content's stable `id:`: added nullable, filled by 0007, required by 0008.

    Three migrations rather than one: PostgreSQL refuses to alter a table in the transaction that
    updated its rows while deferred constraint checks are pending.
    """

    dependencies = [
        ("exercises", "0005_attempt_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="exercise",
            name="key",
            field=models.SlugField(db_index=False, max_length=48, null=True),
        ),
    ]
