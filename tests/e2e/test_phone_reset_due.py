"""Small screens, password reset and due dates, at a desktop's width and a phone's (390 px).

- Every table exercise of every workbook: each answer input lies inside the viewport with no
  sideways scrolling, in both themes, and the table can be filled in and graded there.
- The header is one row on a phone: the brand and a Menu button that unfolds the navigation,
  operable from the keyboard.
- Password reset by email: request, the email as the live server sent it (Django's test mail
  outbox: the live server runs in this process), the link, a new password, logging in with it;
  an unknown address gets the same page and no email; a used or wrong link is refused plainly.
- A learner sees the due dates of their cohort's workbooks, and which are overdue, on the home,
  workbook and cohort pages.
"""

from __future__ import annotations

import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.utils import timezone
from playwright.sync_api import Page, ViewportSize, expect

from apps.accounts import services as account_services
from apps.accounts.models import Role, User
from apps.exercises.choices import AnswerFormat
from apps.exercises.models import Exercise
from apps.exercises.selectors import workbook_get
from apps.exercises.tests.answers import correct_payload
from apps.learning import services as learning_services
from apps.progress import services as progress_services
from tests.e2e.conftest import DESKTOP, PASSWORD, PHONE, Site
from tests.e2e.test_pages import report, serious, visit

WIDTHS: dict[str, ViewportSize] = {"desktop": DESKTOP, "phone": PHONE}
NEW_PASSWORD = "a-new-e2e-pass-7Tq"  # test accounts only


def table_exercises() -> list[Exercise]:
    """Every table exercise in every workbook, found in the database rather than listed here."""
    found = list(
        Exercise.objects.filter(format=AnswerFormat.TABLE, is_active=True, workbook__is_published=True)
        .select_related("workbook", "current_version")
        .order_by("workbook__slug", "chapter__number", "position")
    )
    names = {f"{e.workbook.slug} {e.number}" for e in found}
    assert {"transformer-math 8.5", "scaling-book 1.4"} <= names, names  # the two the review named
    return found


def assert_inside_viewport(page: Page, width: int, what: str) -> None:
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{what}: the page scrolls sideways ({scroll} px > {width} px)"


def assert_fully_in_view(page: Page, selector: str, width: int) -> int:
    """Every element matching ``selector`` is visible and lies within [0, width]; returns how many."""
    boxes = page.locator(selector)
    count = boxes.count()
    for i in range(count):
        element = boxes.nth(i)
        expect(element).to_be_visible()
        box = element.bounding_box()
        assert box is not None
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"{selector} #{i} at {box}, viewport {width}"
    return count


# ---- tables ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_every_table_answer_input_is_in_view_and_usable(site: Site, width: str, theme: str) -> None:
    viewport = WIDTHS[width]
    learner = site.user("tables")
    page = site.login(site.page(phone=width == "phone", dark=theme == "dark"), learner)
    for exercise in table_exercises():
        what = f"{exercise.workbook.slug} {exercise.number} ({width}, {theme})"
        visit(page, f"/w/{exercise.workbook.slug}/{exercise.number}/")
        inputs = assert_fully_in_view(page, "input[name^='cell:']", viewport["width"])
        cells = correct_payload(exercise, learner)["cells"]
        assert inputs == len(cells) > 0, what
        for i in range(inputs):  # wide enough to read what is typed, not a sliver
            box = page.locator("input[name^='cell:']").nth(i).bounding_box()
            assert box is not None and box["width"] >= 115, (what, box)
        assert_inside_viewport(page, viewport["width"], what)
        found = serious(page)
        assert not found, report({what: found})
        for cid, value in cells.items():
            page.locator(f'input[name="cell:{cid}"]').fill(value)
        page.get_by_role("button", name="Check answer").click()
        expect(page.locator("#feedback")).to_contain_text("Correct")
        # The per-cell verdicts appear beside their inputs, in view as well.
        assert assert_fully_in_view(page, ".answer-grid .cell-mark", viewport["width"]) == inputs
        assert_inside_viewport(page, viewport["width"], what + " after grading")
        if exercise.number == "8.5":
            site.shot(page, f"table-{theme}-{width}")
    assert page.js_errors == []  # type: ignore[attr-defined]


# ---- the header -----------------------------------------------------------------------------------

# The header's visible children, their vertical extents, and its own content height.
HEADER_ROW = """header => {
  const style = getComputedStyle(header);
  const inner = header.getBoundingClientRect().height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom)
    - parseFloat(style.borderTopWidth) - parseFloat(style.borderBottomWidth);
  const items = [...header.querySelectorAll(':scope > *, :scope > .site-menu > *')]
    .filter(el => getComputedStyle(el).display !== 'contents')
    .map(el => el.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
  const brand = header.querySelector('.brand');
  return {inner, line: parseFloat(getComputedStyle(brand).lineHeight), tops: items.map(r => r.top),
          bottoms: items.map(r => r.bottom), heights: items.map(r => r.height)};
}"""


def assert_one_row(page: Page) -> None:
    row = page.locator("header.site").evaluate(HEADER_ROW)
    tallest = max(row["heights"])
    # One line of text (the brand's line height), or a control a little taller than one.
    assert tallest < 1.8 * row["line"], row
    # Everything shares the row: each item overlaps every other vertically...
    assert max(row["tops"]) < min(row["bottoms"]), row
    # ...and the header is no taller than its tallest item.
    assert row["inner"] <= tallest + 1, row


def test_the_phone_header_is_one_row_and_its_menu_works_from_the_keyboard(site: Site) -> None:
    learner = site.user("header")
    for dark in (False, True):
        visitor = site.page(phone=True, dark=dark)
        for url in ("/", "/login/", "/signup/", "/password/reset/"):
            visit(visitor, url)
            assert_one_row(visitor)
            expect(visitor.locator("header.site").get_by_role("link", name="Sign up")).to_be_visible()

    page = site.login(site.page(phone=True), learner)
    visit(page, "/progress/")
    assert_one_row(page)
    toggle = page.locator("header.site").get_by_role("button", name="Menu")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("navigation", name="Main")).to_be_hidden()  # folded, out of the Tab order
    site.shot(page, "header-closed-light-phone")

    # From the top of the page: Tab to the button, open it, Tab on to a link, follow it.
    page.locator("body").focus()
    for _ in range(5):
        page.keyboard.press("Tab")
        if toggle.evaluate("el => el === document.activeElement"):
            break
    expect(toggle).to_be_focused()
    page.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    main_nav = page.get_by_role("navigation", name="Main")
    expect(main_nav).to_be_visible()
    assert_inside_viewport(page, PHONE["width"], "open menu")
    found = serious(page)
    assert not found, report({"menu open": found})
    site.shot(page, "header-open-light-phone")
    # Escape folds it and leaves the focus on the button.
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    expect(main_nav.get_by_role("link", name="Workbooks")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # past Progress and Reviews
    leaderboard = main_nav.get_by_role("link", name="Leaderboard")
    page.keyboard.press("Tab")
    expect(leaderboard).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/leaderboard/$"))
    assert_one_row(page)
    page.get_by_role("button", name="Menu").click()
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Leaderboard")).to_have_attribute(
        "aria-current", "page"
    )
    expect(page.get_by_role("navigation", name="Account").get_by_role("button", name="Log out")).to_be_visible()

    # On a desktop there is no button: both navs are in the one row.
    desk = site.login(site.page(), learner)
    visit(desk, "/progress/")
    assert_one_row(desk)
    expect(desk.locator("header.site .menu-toggle")).to_be_hidden()
    expect(desk.get_by_role("navigation", name="Main").get_by_role("link", name="Cohorts")).to_be_visible()
    assert page.js_errors == [] and desk.js_errors == []  # type: ignore[attr-defined]


# ---- password reset -------------------------------------------------------------------------------


def reset_link(message: mail.EmailMessage, live_url: str) -> str:
    links = re.findall(r"https?://\S+", str(message.body))
    assert len(links) == 1, message.body
    assert links[0].startswith(live_url + "/password/reset/"), (links, live_url)
    return str(links[0])


def ask_for_a_link(page: Page, email: str) -> None:
    page.goto("/login/")
    page.get_by_role("link", name="Forgot your password?").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Forgot your password?")
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Send me a reset link").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Check your inbox")


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_password_reset_by_email_from_request_to_log_in(site: Site, width: str) -> None:
    phone = width == "phone"
    user = site.user("forgetful")
    address = f"forgetful-{width}@example.org"
    account_services.user_set_email(user=user, email=address)
    before = len(mail.outbox)

    # An address without an account: the same page, and no email.
    page = site.page(phone=phone, dark=phone)
    ask_for_a_link(page, "nobody-here@example.org")
    assert len(mail.outbox) == before
    unknown_page = page.locator("main").inner_text()

    ask_for_a_link(page, address.upper())  # addresses match whatever their case
    assert page.locator("main").inner_text() == unknown_page  # word for word: nothing told apart
    found = serious(page)
    assert not found, report({"reset sent": found})
    assert len(mail.outbox) == before + 1
    message = mail.outbox[-1]
    assert message.to == [address]
    assert message.subject == "Reset your password on ML-systems workbooks"
    assert "forgetful" in str(message.body) and "one hour" in str(message.body)
    link = reset_link(message, site.url)

    page.goto(link)
    # Django moves the token into the session and out of the address bar (and Referer headers).
    expect(page).to_have_url(re.compile(r".*/password/reset/[^/]+/set-password/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Choose a new password")
    found = serious(page)
    assert not found, report({"choose": found})
    if phone:
        assert_inside_viewport(page, PHONE["width"], "choose a new password")
    # A weak password is refused with the validators' reasons, and nothing changes.
    page.get_by_label("New password", exact=True).fill("password")
    page.get_by_label("New password confirmation").fill("password")
    page.get_by_role("button", name="Set my new password").click()
    expect(page.locator(".field-error").first).to_be_visible()
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Set my new password").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your password is changed")
    site.shot(page, f"reset-complete-{width}")

    page.locator("main").get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r".*/$"))
    expect(page.locator("header.site")).to_contain_text(user.username)

    # The old password no longer works.
    other = site.page(phone=phone)
    other.goto("/login/")
    other.get_by_label("Username").fill(user.username)
    other.get_by_label("Password").fill(PASSWORD)
    other.get_by_role("button", name="Log in").click()
    expect(other.locator(".msg.invalid")).to_be_visible()

    # The link is spent, and a made-up one is no better: both refused in words, nothing changed.
    uid = link.rstrip("/").split("/")[-2]
    for bad in (link, f"{site.url}/password/reset/{uid}/c3w6ne-0123456789abcdef0123456789abcdef/"):
        other.goto(bad)
        expect(other.get_by_role("heading", level=1)).to_have_text("This reset link cannot be used")
        expect(other.get_by_role("alert")).to_contain_text("wrong, has expired, or has been used already")
        expect(other.get_by_label("New password", exact=True)).to_have_count(0)
        expect(other.get_by_role("link", name="Ask for a new link")).to_be_visible()
    found = serious(other)
    assert not found, report({"refused": found})
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)
    assert page.js_errors == [] and other.js_errors == []  # type: ignore[attr-defined]


# ---- due dates ------------------------------------------------------------------------------------


@pytest.fixture
def due_learner(site: Site) -> User:
    """Dee, in a cohort (Auckland time) with three workbooks due: transformer-math yesterday and
    unfinished (overdue), roofline yesterday and finished (complete), scaling-book in three days."""
    teacher = site.user("teacher", Role.INSTRUCTOR)
    tz = "Pacific/Auckland"
    today = timezone.now().astimezone(ZoneInfo(tz)).date()
    cohort = progress_services.cohort_create(
        instructor=teacher,
        name="Autumn cohort",
        time_zone=tz,
        workbooks=[
            (workbook_get(slug="transformer-math"), today - timedelta(days=1)),
            (workbook_get(slug="roofline"), today - timedelta(days=1)),
            (workbook_get(slug="scaling-book"), today + timedelta(days=3)),
        ],
    )
    dee = site.user("dee")
    progress_services.cohort_join(user=dee, code=cohort.join_code)
    roofline = list(
        Exercise.objects.filter(workbook__slug="roofline", is_active=True).select_related("current_version")
    )
    assert roofline and all(e.format != AnswerFormat.CODE for e in roofline)
    for exercise in roofline:
        learning_services.attempt_create(user=dee, exercise=exercise, payload=correct_payload(exercise, dee))
    return dee


@pytest.mark.parametrize(("width", "theme"), [("desktop", "light"), ("phone", "dark")])
def test_a_learner_sees_due_dates_and_what_is_overdue(site: Site, due_learner: User, width: str, theme: str) -> None:
    viewport = WIDTHS[width]
    page = site.login(site.page(phone=width == "phone", dark=theme == "dark"), due_learner)

    visit(page, "/")
    section = page.get_by_role("region", name="Due dates")
    items = section.get_by_role("listitem")
    expect(items).to_have_count(3)
    overdue = items.filter(has_text="Transformer Math")
    expect(overdue).to_contain_text("Overdue")
    expect(overdue).to_contain_text("was due")
    expect(overdue).to_contain_text("for Autumn cohort")
    expect(items.filter(has_text="Roofline")).to_contain_text("✓ Complete")
    expect(items.filter(has_text="Roofline")).not_to_contain_text("Overdue")
    expect(items.filter(has_text="Scaling")).to_contain_text("(in 3 days)")
    expect(section).to_contain_text("end of day Pacific/Auckland")
    assert section.get_by_text("Overdue", exact=True).count() == 1
    assert_inside_viewport(page, viewport["width"], "home")
    site.shot(page, f"due-home-{theme}-{width}")
    found = serious(page)

    overdue.get_by_role("link", name="Transformer Math").click()
    page.wait_for_url(re.compile(r".*/w/transformer-math/$"))
    due = page.get_by_role("list", name="Due dates")
    expect(due).to_contain_text("Overdue")
    expect(due).to_contain_text("assigned in Autumn cohort")
    assert_inside_viewport(page, viewport["width"], "workbook")
    found += serious(page)

    visit(page, "/w/scaling-book/")
    expect(page.get_by_role("list", name="Due dates")).to_contain_text("(in 3 days)")
    expect(page.get_by_role("list", name="Due dates")).not_to_contain_text("Overdue")

    visit(page, "/cohorts/")
    card = page.locator(".card").filter(has_text="Autumn cohort")
    expect(card.locator(".assigned li").filter(has_text="Transformer Math")).to_contain_text("Overdue")
    expect(card.locator(".assigned li").filter(has_text="Roofline")).to_contain_text("✓ Complete")
    expect(card.locator(".assigned li").filter(has_text="Scaling")).to_contain_text("(in 3 days)")
    assert_inside_viewport(page, viewport["width"], "cohorts")
    found += serious(page)
    assert not found, report({"due pages": found})
    assert page.js_errors == []  # type: ignore[attr-defined]
