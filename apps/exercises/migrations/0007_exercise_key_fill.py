"""Give every existing exercise its key: the `id:` that the content files now give the exercise
with the same (workbook slug, number). Rows the files do not have get ``retired-<pk>``. Stored
versions get the id in their spec too: a spec is validated against the schema, which requires it,
whenever an old attempt is shown.

The files are read as plain YAML (not through the content schema, which will change after this
migration is written): only each workbook's slug and each exercise's number and id are needed.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.db import migrations


def content_ids(root: Path) -> dict[tuple[str, str], str]:
    """(workbook slug, exercise number) → id, from the content files under ``root``."""
    ids: dict[tuple[str, str], str] = {}
    if not root.is_dir():
        return ids
    for folder in sorted(root.iterdir()):
        meta_path = folder / "workbook.yaml"
        if not meta_path.is_file():
            continue
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8")) or {}
        slug = str(meta.get("slug") or folder.name)
        for path in sorted((folder / "chapters").glob("*.yaml")):
            chapter = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            for exercise in chapter.get("exercises") or []:
                if isinstance(exercise, dict) and exercise.get("id") and exercise.get("number") is not None:
                    ids[(slug, str(exercise["number"]))] = str(exercise["id"])
    return ids


def fill_keys(apps: Any, schema_editor: Any) -> None:
    Exercise = apps.get_model("exercises", "Exercise")
    ids = content_ids(Path(settings.CONTENT_DIR))
    unmatched_active = []
    for exercise in Exercise.objects.select_related("workbook").order_by("pk"):
        key = ids.get((exercise.workbook.slug, exercise.number))
        if key is None:
            key = f"retired-{exercise.pk}"
            if exercise.is_active:
                unmatched_active.append(f"{exercise.workbook.slug} {exercise.number}")
        exercise.key = key
        exercise.save(update_fields=["key"])
    ExerciseVersion = apps.get_model("exercises", "ExerciseVersion")
    for version in ExerciseVersion.objects.select_related("exercise").order_by("pk").iterator(chunk_size=500):
        if isinstance(version.spec, dict) and "id" not in version.spec:
            version.spec = {**version.spec, "id": version.exercise.key}
            # As cache.content_hash computes it, so that an unchanged exercise stays unchanged.
            version.content_hash = hashlib.sha256(json.dumps(version.spec, sort_keys=True).encode()).hexdigest()[:16]
            version.save(update_fields=["spec", "content_hash"])
    if unmatched_active:
        # Not an error (a workbook may have left the files), but the next sync_content retires them.
        sys.stderr.write(
            f"\n  exercises: {len(unmatched_active)} active exercise(s) not in {settings.CONTENT_DIR} got a "
            f"retired-<pk> key: {', '.join(unmatched_active[:20])}\n"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("exercises", "0006_exercise_key"),
    ]

    operations = [
        migrations.RunPython(fill_keys, migrations.RunPython.noop, elidable=True),
    ]
