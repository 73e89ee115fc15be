"""One definition per instructor figure: on one cohort, the overview's stuck points, the exercise
statistics page, both CSV files and both API resources report the same figures, equal to the ones
worked out by hand here; and the CSV files carry text, not TeX."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from datetime import date

import pytest
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.models import Role, User
from apps.exercises.content.plain import tex_plain
from apps.exercises.models import Exercise, Workbook
from apps.learning import services as learning_services
from apps.progress import services
from apps.progress.models import Cohort
from apps.progress.tests.conftest import Clock, Solve

pytestmark = pytest.mark.django_db

# 0.4, a choice exercise whose options are TeX ("$d = 2,048$, $L = 20$"): its wrong answers too.
NUMBER = "0.4"
TITLE = r"Width or depth at $N^*$: $2 \times 10^{9}$ parameters"


@pytest.fixture
def cohort(make_user: Callable[..., User], clock: Clock, solve: Solve) -> tuple[Cohort, Exercise]:
    """Seven learners on 0.4, from 10:00 (UTC) on 2026-06-03:

    ========  =====================================  ========  ======================  =========
    learner   what they did                          group     attempts (to solve)     minutes
    ========  =====================================  ========  ======================  =========
    first     right the first time                   solved    1 (1)                   0
    several   wrong ×3, right at 10:40               solved    4 (4)                   40
    again     wrong, right at 10:10, then wrong+right  solved  4 (2)                   10
    peeked    wrong, reveals, then right             revealed  2 (—)                   —
    gave_up   reveals without trying                 revealed  0 (—)                   —
    stuck     wrong ×2                               stuck     2 (—)                   —
    idle      nothing                                —         —                       —
    ========  =====================================  ========  ======================  =========

    Learners 6 = solved 3 + revealed 2 + stuck 1; attempts 13; attempts to solve 1, 4, 2: median
    2; minutes to solve 0, 40, 10: median 10."""
    teacher = make_user("teacher", role=Role.INSTRUCTOR)
    workbook = Workbook.objects.get(slug="transformer-math")
    cohort = services.cohort_create(
        instructor=teacher, name="Figures", time_zone="UTC", workbooks=[(workbook, date(2026, 7, 1))]
    )
    exercise = Exercise.objects.select_related("workbook", "current_version").get(workbook=workbook, number=NUMBER)
    Exercise.objects.filter(pk=exercise.pk).update(title=TITLE)
    users = {name: make_user(name) for name in ("first", "several", "again", "peeked", "gave_up", "stuck", "idle")}
    for user in users.values():
        services.cohort_join(user=user, code=cohort.join_code)

    def at(minute: int) -> None:
        clock.set(f"2026-06-03T10:{minute:02d}:00+00:00")

    at(0)
    for name in ("several", "again", "peeked", "stuck"):
        solve(users[name], exercise, correct=False)
    assert solve(users["first"], exercise)
    at(5)
    solve(users["several"], exercise, correct=False)
    solve(users["stuck"], exercise, correct=False)
    learning_services.exercise_reveal(user=users["peeked"], exercise=exercise)
    learning_services.exercise_reveal(user=users["gave_up"], exercise=exercise)
    at(10)
    assert solve(users["again"], exercise)
    solve(users["several"], exercise, correct=False)
    assert solve(users["peeked"], exercise)  # after revealing: revealed, not solved
    at(20)
    solve(users["again"], exercise, correct=False)  # after the solve: not in its attempts to solve
    solve(users["again"], exercise)
    at(40)
    assert solve(users["several"], exercise)
    clock.set("2026-06-04T09:00:00+00:00")
    return cohort, exercise


EXPECTED = {
    "learners": 6,
    "solved": 3,
    "revealed": 2,
    "stuck": 1,
    "attempts": 13,
    "solve_rate": 0.5,
    "reveal_share": pytest.approx(2 / 6),
    "median_attempts_to_solve": 2,
    "median_minutes_to_solve": 10,
}
# The same figures as the pages show them (_figures_cells.html) and as the CSV files write them.
ON_PAGE = ["6", "3 (50%)", "2 (33%)", "1", "13", "2", "10 min"]
IN_CSV = ["6", "3", "2", "1", "0.500", "0.333", "13", "2", "10"]
CSV_HEADER = [
    "learners", "solved", "revealed before solving", "stuck", "solve rate", "revealed share", "attempts",
    "median attempts to solve", "median minutes to solve",
]  # fmt: skip


def cells(html: str) -> list[str]:
    return [re.sub(r"\s+", " ", c).strip() for c in re.findall(r"<td>(.*?)</td>", html, re.DOTALL)]


def table(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode())))


def test_the_overview_statistics_csv_and_api_agree_on_hand_worked_figures(
    cohort: tuple[Cohort, Exercise],
) -> None:
    c, _ = cohort
    api = APIClient()
    api.force_authenticate(c.instructor)
    admin = Client()
    admin.force_login(c.instructor)
    base = f"/api/v1/cohorts/{c.pk}"

    # The API: the overview's stuck point and the statistics row.
    overview = api.get(f"{base}/overview/?stuck_limit=50").json()
    [point] = [p for p in overview["stuck_points"] if p["number"] == NUMBER]
    [stats] = [s for s in api.get(f"{base}/exercises/?workbook=transformer-math").json() if s["number"] == NUMBER]
    for body in (point, stats):
        assert {k: body[k] for k in EXPECTED} == EXPECTED

    # The pages: the same cells under the same headings.
    page = admin.get(f"/admin/progress/cohort/{c.pk}/progress/?stuck_limit=50").content.decode()
    stuck_table = page.split('id="stuck-table"')[1].split("</table>")[0]
    [row] = [r for r in stuck_table.split("<tr") if f"#exercise-{NUMBER}" in r]
    assert cells(row) == ON_PAGE
    stats_page = admin.get(f"/admin/progress/cohort/{c.pk}/exercises/?workbook=transformer-math").content.decode()
    stats_row = stats_page.split(f'id="exercise-{NUMBER}"')[1].split("</tr>")[0]
    assert cells(stats_row)[1:8] == ON_PAGE  # after the kind
    for html in (page.split('id="stuck-table"')[1], stats_page.split('id="stats-table"')[1]):
        head = html.split("</thead>")[0]
        for label in ("Solved", "Revealed before solving", "Stuck", "Median attempts to solve", "Median time to solve"):
            assert f">{label}<" in head
        assert "per solve" not in head and "Revealed instead" not in head

    # The CSV files, from the admin and from the API: the same columns, the same values.
    stuck_csv = table(api.get(f"{base}/stuck-points.csv").content)
    assert stuck_csv[0] == ["workbook", "exercise", "title", "kind", *CSV_HEADER]
    [stuck_line] = [r for r in stuck_csv[1:] if r[1] == NUMBER]
    assert stuck_line[4:] == IN_CSV
    for url in (
        f"/admin/progress/cohort/{c.pk}/exercises/?workbook=transformer-math&format=csv",
        f"{base}/exercises.csv?workbook=transformer-math",
    ):
        response = admin.get(url) if url.startswith("/admin/") else api.get(url)
        stats_csv = table(response.content)
        assert stats_csv[0][3:12] == CSV_HEADER
        [line] = [r for r in stats_csv[1:] if r[0] == NUMBER]
        assert line[3:12] == IN_CSV

        # Text, not TeX: the title and the wrong answers (0.4's options are TeX) in their plain reading.
        assert line[1] == "Width or depth at N*: 2 × 10⁹ parameters"
        assert line[12] and "$" not in line[12] and "\\" not in line[12]
        assert re.search(r"d = [\d,]+, L = \d+ ×\d", line[12]), line[12]
        assert "$" not in stuck_line[2] and stuck_line[2] == line[1]


def test_a_learners_attempts_csv_reads_options_as_text(cohort: tuple[Cohort, Exercise]) -> None:
    c, _ = cohort
    api = APIClient()
    api.force_authenticate(c.instructor)
    peeked = User.objects.get(username="peeked")
    rows = table(api.get(f"/api/v1/cohorts/{c.pk}/learners/{peeked.pk}/attempts.csv").content)
    answers = [r[rows[0].index("answer")] for r in rows[1:]]
    assert len(answers) == 2 and all(a and "$" not in a for a in answers)
    assert all(re.fullmatch(r"d = [\d,]+, L = \d+", a) for a in answers), answers


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("$N^*$ as a formula in $C$", "N* as a formula in C"),
        (r"[8,192,256]$\times$[256,8,192]", "[8,192,256]×[256,8,192]"),
        (r"$T_{\text{math}}$ on q1", "T_math on q1"),
        (r"$\frac{a+b}{c}$ and $\sqrt{d}$", "(a + b)/c and √d"),
        ("$2^{30}/10^9$ and $x_1$", "2³⁰/10⁹ and x₁"),
        (r"$\text{FLOPs} \approx 6ND$", "FLOPs ≈ 6ND"),
        ("$$a^2$$", "a²"),
        # Not math (money, a typed formula), and the text around math, are left exactly as written.
        ("$3/hour and $72/day", "$3/hour and $72/day"),
        ("2*N*d is $2ND$", "2*N*d is 2ND"),
    ],
)
def test_tex_is_read_as_plain_text(text: str, plain: str) -> None:
    assert tex_plain(text) == plain
