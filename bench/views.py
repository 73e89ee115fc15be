"""Baseline views for bench/grading_api.py, mounted only by bench.settings.

Both go through the same middleware, authentication (token) and permission classes as the
grading endpoint, so the ratios measure what grading adds: (a) nothing else, (b) one row
inserted in the same database inside a transaction.
"""

from __future__ import annotations

import json

from django.db import connection, transaction
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class TrivialJsonView(APIView):
    def post(self, request: Request) -> Response:
        return Response({"ok": True})


class InsertOneRowView(APIView):
    def post(self, request: Request) -> Response:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "INSERT INTO bench_row (user_id, payload, created_at) VALUES (%s, %s, now()) RETURNING id",
                [request.user.pk, json.dumps(request.data)],
            )
            row_id = cursor.fetchone()[0]
        return Response({"id": row_id}, status=201)
