"""No payload runs on any page: learner, instructor, author and LMS input, viewed by each of them.

One test per page (or per page flow), each with the whole corpus in it; see conftest.py for what
is watched and ``payloads.py`` for the tags that say which payload ran from which field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from playwright.sync_api import Frame, Page

from apps.accounts.models import User
from tests.xss import content
from tests.xss.conftest import Watcher, World, assert_clean
from tests.xss.payloads import ALL, BY_ID, STORABLE, Payload

pytestmark = [pytest.mark.xdist_group("xss")]

WB = content.SLUG
NUMBERS = (
    content.NUMERIC,
    content.CHOICE,
    content.ORDER,
    content.TABLE,
    content.PARTS,
    content.INTEGER,
    content.BUILD,
    content.DEBUG,
)


@dataclass(frozen=True)
class View:
    role: str  # an attribute of World: fresh, veteran, instructor, author; "" for no account
    path: Callable[[World], str]
    shows: bool = True  # the page shows some of the corpus (pages that may show none are still watched)


def _exercise_admin(number: str) -> Callable[[World], str]:
    return lambda w: f"/admin/exercises/exercise/{w.exercises[number].pk}/change/"


def _attempt_page(what: str) -> Callable[[World], str]:
    def path(w: World) -> str:
        attempt = w.code_attempts[what]
        return f"/w/{attempt.exercise.workbook.slug}/{attempt.exercise.number}/?attempt={attempt.pk}"

    return path


def _cohort(suffix: str) -> Callable[[World], str]:
    return lambda w: f"/admin/progress/cohort/{w.cohorts[0].pk}/{suffix}"


VIEWS: dict[str, View] = {
    # Learners: before any answer, and with a history of every kind (hints, reveals, code runs).
    "fresh-home": View("fresh", lambda w: "/"),
    "fresh-workbook": View("fresh", lambda w: f"/w/{WB}/"),
    # The fresh learner's exercise pages, before any answer: test_submitting_payloads_through_the_page.
    "veteran-home": View("veteran", lambda w: "/"),
    "veteran-workbook": View("veteran", lambda w: f"/w/{WB}/"),
    **{f"veteran-exercise-{n}": View("veteran", lambda w, n=n: f"/w/{WB}/{n}/") for n in NUMBERS},  # type: ignore[misc]
    **{f"veteran-code-{what}": View("veteran", _attempt_page(what)) for what in ("prints", "raises", "raises-in-call")},
    "veteran-debug-fix": View("veteran", _attempt_page("debug-fix")),
    "veteran-skills": View("veteran", lambda w: f"/w/{WB}/skills/"),
    "veteran-progress": View("veteran", lambda w: "/progress/"),
    "veteran-reviews": View("veteran", lambda w: "/reviews/", shows=False),
    "veteran-leaderboard": View("veteran", lambda w: "/leaderboard/"),
    "veteran-leaderboard-cohort": View("veteran", lambda w: f"/leaderboard/?scope=cohort&cohort={w.cohorts[0].pk}"),
    "veteran-cohorts": View("veteran", lambda w: "/cohorts/"),
    "veteran-profile": View("veteran", lambda w: "/profile/", shows=False),
    # Instructors: their cohorts, join codes, and the admin's monitoring of the veteran.
    "instructor-cohorts": View("instructor", lambda w: "/cohorts/"),
    "instructor-leaderboard": View("instructor", lambda w: f"/leaderboard/?scope=cohort&cohort={w.cohorts[0].pk}"),
    "admin-cohort-list": View("instructor", lambda w: "/admin/progress/cohort/"),
    "admin-cohort-change": View("instructor", _cohort("change/")),
    "admin-cohort-progress": View("instructor", _cohort("progress/")),
    "admin-cohort-exercises": View("instructor", _cohort("exercises/")),
    "admin-learner-history": View("instructor", lambda w: _cohort(f"learners/{w.veteran.pk}/")(w)),
    # Authors: the admin's previews of the content.
    "admin-index": View("author", lambda w: "/admin/", shows=False),
    "admin-workbook": View("author", lambda w: f"/admin/exercises/workbook/{w.workbook.pk}/change/"),
    "admin-chapter": View("author", lambda w: f"/admin/exercises/chapter/{w.workbook.chapters.get().pk}/change/"),
    "admin-exercise-list": View("author", lambda w: f"/admin/exercises/exercise/?workbook__id__exact={w.workbook.pk}"),
    **{f"admin-exercise-{n}": View("author", _exercise_admin(n)) for n in NUMBERS},
    "admin-attempt-list": View("author", lambda w: "/admin/exercises/attempt/", shows=False),
}


def _user(world: World, role: str) -> User | None:
    return getattr(world, role) if role else None


@pytest.mark.parametrize("name", list(VIEWS))
def test_no_payload_runs_on_the_page(
    name: str, world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    view = VIEWS[name]
    w = watch(_user(world, view.role))
    page = w.open(view.path(world))
    if view.shows:
        assert_shows_corpus(page, name)
    assert_clean(caplog, w)


def assert_shows_corpus(page: Page | Frame, name: str) -> None:
    """The corpus is on the page as text: a view that showed none of it would prove nothing."""
    html = page.content()
    assert "~" in html or "&lt;" in html, f"{name}: no payload text on the page"


# ---------------------------------------------------------------------------------------------
# Submitting through the page: the answer fields' previews and errors, the graded feedback (the
# mistake's and options' feedback, inserted by static/js/exercise.js), code runs followed live.
# ---------------------------------------------------------------------------------------------


def _joined(where: str, payloads: tuple[Payload, ...] = ALL) -> str:
    return " ".join(p.render(where) for p in payloads)


def _submit(
    w: Watcher, page: Page, form: str = "#answer-form", timeout: float = 90_000, region: str = "feedback"
) -> None:
    """Submit ``form`` with JavaScript and wait for its final feedback (in ``region``: a Debug's
    lines verdict goes by its own button, in #lines-feedback); then check the page."""
    page.evaluate("(r) => document.getElementById(r).replaceChildren()", region)
    # Submitted by the form itself: markup a payload injected into the page (a button, a form)
    # must not change which control is clicked.
    page.evaluate("(f) => document.querySelector(f).requestSubmit()", form)
    page.wait_for_function(
        """(r) => { const f = document.getElementById(r);
                  return f.textContent.trim() !== '' && f.getAttribute('aria-busy') !== 'true'
                    && !/Queued for the sandbox|Running your code/.test(f.textContent); }""",
        arg=region,
        timeout=timeout,
    )
    w.check(page)


def _fill_all(page: Page, selector: str, value: str) -> int:
    inputs = page.locator(selector)
    for i in range(inputs.count()):
        inputs.nth(i).fill(value)
    return inputs.count()


def _numeric(w: Watcher, page: Page) -> None:
    page.locator("#answer").fill(_joined("typed"))
    _submit(w, page)  # not read: the error, with what was typed
    page.locator("#answer").fill("84 params")  # the listed mistake: its feedback
    _submit(w, page)


def _integer(w: Watcher, page: Page) -> None:
    page.locator("#answer").fill(_joined("typed"))
    _submit(w, page)
    page.locator("#answer").fill("41")
    _submit(w, page)


def _parts(w: Watcher, page: Page) -> None:
    assert _fill_all(page, "input[name^='part:']", _joined("typed")) == 2
    _submit(w, page)
    page.locator("input[name='part:n']").fill("84 params")
    page.locator("input[name='part:e']").fill("x + y")  # the expression's listed mistake
    _submit(w, page)


def _table(w: Watcher, page: Page) -> None:
    assert _fill_all(page, "input[name^='cell:']", _joined("typed")) > 0
    _submit(w, page)
    _fill_all(page, "input[name^='cell:']", "1")
    _submit(w, page)


def _choice(w: Watcher, page: Page) -> None:
    boxes = page.locator("#answer-form input[name='choices']")
    boxes.nth(boxes.count() - 1).check()
    _submit(w, page)  # a wrong option (order is per learner: the last may be right, either is fine)
    for i in range(boxes.count()):
        boxes.nth(i).check()
        _submit(w, page)


def _order(w: Watcher, page: Page) -> None:
    _submit(w, page)


def _build(w: Watcher, page: Page) -> None:
    for source in content.learner_code().values():
        page.locator("textarea#code").fill(source)
        _submit(w, page)


def _debug(w: Watcher, page: Page) -> None:
    page.locator("#answer-form input[name='lines']").first.check()
    _submit(w, page, region="lines-feedback")
    page.locator("textarea#fix-code").fill(content.learner_code()["raises-in-call"])
    _submit(w, page, "#fix-form")


FLOWS: dict[str, Callable[[Watcher, Page], None]] = {
    content.NUMERIC: _numeric,
    content.CHOICE: _choice,
    content.ORDER: _order,
    content.TABLE: _table,
    content.PARTS: _parts,
    content.INTEGER: _integer,
    content.BUILD: _build,
    content.DEBUG: _debug,
}


@pytest.mark.parametrize("number", NUMBERS)
def test_submitting_payloads_through_the_page(
    number: str, world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    w = watch(world.fresh)
    page = w.open(f"/w/{WB}/{number}/")  # the exercise page before any answer
    assert_shows_corpus(page, f"fresh-exercise-{number}")
    FLOWS[number](w, page)
    # Every hint, asked for on the page (the script inserts each one).
    hint = page.locator("#hints form button[type=submit]")
    while hint.count():
        shown = page.locator("#hints .hint").count()
        hint.first.dispatch_event("click")  # no hit-target check: injected markup may overlay it
        page.wait_for_function(f"() => document.querySelectorAll('#hints .hint').length > {shown}")
        w.check(page)
    assert_clean(caplog, w)


# ---------------------------------------------------------------------------------------------
# Names: sign-up and sign-in echo what was typed (usernames themselves cannot hold markup).
# ---------------------------------------------------------------------------------------------


def test_signup_and_login_forms_echo_payloads_as_text(
    world: World, watch: Callable[[User | None], Watcher], caplog: pytest.LogCaptureFixture
) -> None:
    w = watch(None)
    page = w.open("/signup/")
    for pid in ("h07", "h09", "b02", "b03"):
        page.get_by_label("Username").fill(BY_ID[pid].render("signup"))
        page.get_by_label("Password", exact=True).fill("x")
        page.get_by_label("Password confirmation").fill("y")
        page.get_by_role("button", name="Create account").click()
        page.wait_for_load_state("load")
        w.check(page)
    assert page.url.endswith("/signup/")  # refused, the form shown again
    page = w.open("/login/")
    page.get_by_label("Username").fill(_joined("login", STORABLE)[:150])
    page.get_by_label("Password").fill("x")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state("load")
    w.check(page)
    assert_clean(caplog, w)
