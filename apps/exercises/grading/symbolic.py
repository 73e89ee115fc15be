"""Symbolic answers: an expression in named variables, graded by equivalence.

Learners' text is parsed by our own walker over Python's ``ast`` (never ``eval``, never sympy's
``parse_expr``, which evaluates), limited in length, size, exponents and magnitudes so that no
input can make the web process work hard. Two expressions are equivalent when they agree at
several random positive points to 40 significant digits: exact for the rational functions
these workbooks ask for, and bounded in time where ``simplify`` is not. An approximation the
prompt states ("B ≪ D, F") is checked the same way, with the small symbols shrunk by 10⁻¹².
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import sympy

from apps.exercises.grading.base import GradeResult, InvalidAnswer

MAX_CHARS = 200
MAX_NODES = 120
MAX_EXPONENT = 8
MAX_DIGITS = 60  # a constant in an answer stays below 10**60 (and above 10**-60)
# Every exponent's denominator stays at most this, checked before sympy builds anything: a rational
# raised to 1/10**25 made sympy search for an exact 10**25-th root, for minutes and gigabytes (a
# denominator of 10**12 still evaluates in milliseconds).
MAX_ROOT = 10**6
FUNCTIONS = {"sqrt": sympy.sqrt, "log": sympy.log}
_POINTS = 6
_DIGITS = 40
_SMALL = sympy.Rational(1, 10**12)
_REPLACE = {"^": "**", "×": "*", "·": "*", "⋅": "*", "−": "-", "÷": "/", "²": "**2", "³": "**3"}
_IMPLICIT = re.compile(r"(\d|\))\s*([A-Za-z_(])")


class ExpressionError(ValueError):
    """Content whose expression does not parse (raised for authors, not learners)."""


@dataclass(frozen=True)
class SymbolicMistake:
    expr: sympy.Expr
    feedback: str


@dataclass(frozen=True)
class SymbolicTarget:
    """What a symbolic part is graded against, resolved once per exercise version."""

    expr: sympy.Expr
    text: str  # the expression as the author wrote it, shown in the derivation
    symbols: tuple[str, ...]
    small: tuple[str, ...] = ()
    accept_approximate: bool = True
    approximate_feedback: str = ""
    mistakes: tuple[SymbolicMistake, ...] = ()


def _symbols(names: Collection[str]) -> dict[str, sympy.Symbol]:
    return {n: sympy.Symbol(n, positive=True) for n in names}


def _normalize(raw: str) -> str:
    text = raw.strip()
    for old, new in _REPLACE.items():
        text = text.replace(old, new)
    return text


def parse(raw: str, names: Collection[str]) -> sympy.Expr:
    """A learner's expression, or InvalidAnswer saying what is wrong with it."""
    text = _normalize(raw)
    if not text:
        raise InvalidAnswer("empty_answer", "Enter an expression.")
    if len(text) > MAX_CHARS:
        raise InvalidAnswer("too_long", f"Expressions are limited to {MAX_CHARS} characters; this one has {len(text)}.")
    allowed = ", ".join(sorted(names))
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        implicit = _IMPLICIT.search(text)
        if implicit:
            raise InvalidAnswer(
                "unparseable",
                f"Write multiplication with * (“{implicit.group(1)}*{implicit.group(2)}”, not "
                f"“{implicit.group(1)}{implicit.group(2)}”).",
            ) from None
        raise InvalidAnswer(
            "unparseable",
            f"This is not an expression we can read. Use {allowed}, numbers, + - * / ** ( ) and sqrt, log.",
        ) from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise InvalidAnswer("too_long", "This expression is too large to grade; simplify it first.")
    return _Builder(_symbols(names), allowed).build(tree.body)


class _Builder:
    def __init__(self, symbols: Mapping[str, sympy.Symbol], allowed: str) -> None:
        self.symbols = symbols
        self.allowed = allowed

    def fail(self, message: str) -> InvalidAnswer:
        return InvalidAnswer("unparseable", message)

    def build(self, node: ast.expr) -> sympy.Expr:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise self.fail("Only numbers, names and arithmetic are allowed.")
            value = sympy.Integer(node.value) if isinstance(node.value, int) else sympy.Rational(repr(node.value))
            return self._bounded(value)
        if isinstance(node, ast.Name):
            if node.id in self.symbols:
                return self.symbols[node.id]
            near = [n for n in self.symbols if n.lower() == node.id.lower()]
            if near:
                raise self.fail(f"Unknown name “{node.id}”; names are case-sensitive: did you mean {near[0]}?")
            raise self.fail(f"Unknown name “{node.id}”: this answer may use {self.allowed}.")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self.build(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp):
            left, right = self.build(node.left), self.build(node.right)
            if not isinstance(node.op, ast.Pow):
                # Terms with the same base merge their exponents: the merged denominator divides the lcm.
                self._roots(math.lcm(*_denominators(left), *_denominators(right)))
            if isinstance(node.op, ast.Add):
                return self._bounded(left + right)
            if isinstance(node.op, ast.Sub):
                return self._bounded(left - right)
            if isinstance(node.op, ast.Mult):
                return self._bounded(left * right)
            if isinstance(node.op, ast.Div):
                if right == 0:
                    raise self.fail("Division by zero.")
                return self._bounded(left / right)
            if isinstance(node.op, ast.Pow):
                return self._power(left, right)
            raise self.fail("Only + - * / and ** are allowed.")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
            if len(node.args) != 1 or node.keywords:
                raise self.fail(f"{node.func.id} takes one argument.")
            arg = self.build(node.args[0])
            if arg.is_number and arg <= 0:
                raise self.fail(f"{node.func.id} needs a positive argument.")
            if node.func.id == "sqrt":
                return self._power(arg, sympy.Rational(1, 2))
            return sympy.sympify(FUNCTIONS[node.func.id](arg))
        if isinstance(node, ast.Call):
            raise self.fail(f"Only the functions {', '.join(FUNCTIONS)} are allowed.")
        raise self.fail(f"Only numbers, the names {self.allowed}, and + - * / ** are allowed.")

    def _power(self, base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
        if not exponent.is_Rational or abs(exponent) > MAX_EXPONENT:
            raise self.fail(f"Exponents must be numbers between -{MAX_EXPONENT} and {MAX_EXPONENT}.")
        # A power of a power multiplies the exponents: bound the product's denominator too.
        self._roots(max([exponent.q, *(q * exponent.q for q in _denominators(base))]))
        if base.is_number:
            if base == 0 and exponent < 0:
                raise self.fail("Division by zero.")
            if base != 0 and abs(float(sympy.log(abs(base), 10))) * float(abs(exponent)) > MAX_DIGITS:
                raise self.fail("A number in this expression is too large.")
        return self._bounded(sympy.Pow(base, exponent))

    def _roots(self, denominator: int) -> None:
        if denominator > MAX_ROOT:
            raise self.fail(
                "An exponent in this expression is too fine a fraction to grade; "
                "use fractions like 1/2 or 3/4 (simplify the expression first)."
            )

    def _bounded(self, value: sympy.Expr) -> sympy.Expr:
        if value.is_Rational and value != 0:
            magnitude = abs(value)
            if magnitude > sympy.Integer(10) ** MAX_DIGITS or magnitude < sympy.Rational(1, 10**MAX_DIGITS):
                raise self.fail("A number in this expression is too large.")
        return value


def _denominators(expr: sympy.Expr) -> set[int]:
    """The denominators of the rational exponents in an expression (1 when there are none)."""
    return {1} | {int(p.exp.q) for p in expr.atoms(sympy.Pow) if p.exp.is_Rational}


def parse_content(text: str, names: Collection[str]) -> sympy.Expr:
    """An author's expression; the same parser, with errors for the content checker."""
    try:
        return parse(text, names)
    except InvalidAnswer as exc:
        raise ExpressionError(exc.message) from None


def _points(names: Sequence[str], count: int, seed: int) -> list[dict[str, sympy.Rational]]:
    # Deterministic, generic positive values: the same verdict every time for the same input.
    rng = random.Random(seed)  # noqa: S311 -- sample points for an equivalence test, not a secret
    return [{n: sympy.Rational(rng.randint(101, 997), rng.randint(11, 97)) for n in names} for _ in range(count)]


def _value(expr: sympy.Expr, point: Mapping[str, sympy.Rational]) -> sympy.Float | None:
    subs = {sympy.Symbol(n, positive=True): v for n, v in point.items()}
    try:
        value = sympy.N(expr.xreplace(subs), _DIGITS)
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    if not value.is_real or not value.is_finite:
        return None
    return sympy.Float(value, _DIGITS)


def _ratios(
    a: sympy.Expr, b: sympy.Expr, names: Sequence[str], *, small: Collection[str] = (), seed: int = 7
) -> list[sympy.Float]:
    """a/b at random points (small symbols shrunk); points where either is undefined or b is 0 skipped."""
    out = []
    for point in _points(names, _POINTS, seed):
        shrunk = {n: (v * _SMALL if n in small else v) for n, v in point.items()}
        va, vb = _value(a, shrunk), _value(b, shrunk)
        if va is None or vb is None or vb == 0:
            continue
        out.append(va / vb)
    return out


def _all_near(values: Sequence[sympy.Float], target: sympy.Expr, tol: float) -> bool:
    return len(values) >= 3 and all(abs(v - target) <= tol * max(1, abs(target)) for v in values)


def equivalent(a: sympy.Expr, b: sympy.Expr, names: Sequence[str]) -> bool:
    if a == b:
        return True
    diffs = []
    for point in _points(names, _POINTS, seed=11):
        va, vb = _value(a, point), _value(b, point)
        if va is None or vb is None:
            continue
        diffs.append(abs(va - vb) <= sympy.Float("1e-25") * max(abs(va), abs(vb), sympy.Float("1e-30")))
    return len(diffs) >= 3 and all(diffs)


def equal_in_limit(a: sympy.Expr, b: sympy.Expr, names: Sequence[str], small: Collection[str]) -> bool:
    """a/b → 1 when the small symbols shrink: equal under the stated approximation."""
    return bool(small) and _all_near(_ratios(a, b, names, small=small), sympy.Integer(1), 1e-6)


def constant_factor(a: sympy.Expr, b: sympy.Expr, names: Sequence[str]) -> sympy.Float | None:
    """The constant c when a = c·b everywhere (a classic slip: counting a multiply-add as 1 FLOP)."""
    ratios = _ratios(a, b, names)
    if len(ratios) < 3 or ratios[0] == 0:
        return None
    if _all_near(ratios, ratios[0], 1e-20):
        return ratios[0]
    return None


def show(expr: sympy.Expr) -> str:
    return str(sympy.sstr(expr))


def as_latex(raw: str, names: Collection[str]) -> str | None:
    """A learner's expression as LaTeX (for showing it as math), or None if it does not parse."""
    try:
        return str(sympy.latex(parse(raw, names)))
    except (InvalidAnswer, ValueError, OverflowError):  # stored before a grader change: shown as typed
        return None


def grade(raw: str, target: SymbolicTarget) -> GradeResult:
    expr = parse(raw, target.symbols)
    understood = show(expr)
    parsed = {"expression": understood, "understood": understood}
    names = list(target.symbols)
    if equivalent(expr, target.expr, names):
        return GradeResult(True, "Correct: equivalent to the expected expression.", parsed=parsed)
    for mistake in target.mistakes:
        if equivalent(expr, mistake.expr, names):
            return GradeResult(False, mistake.feedback, parsed=parsed)
    if equal_in_limit(expr, target.expr, names, target.small):
        small = ", ".join(target.small)
        default = f"Equivalent only under the stated approximation ({small} much smaller than the rest)" + (
            ": accepted." if target.accept_approximate else "; the question asks for the exact expression."
        )
        return GradeResult(
            target.accept_approximate,
            target.approximate_feedback or default,
            parsed=parsed,
            details={"approximate": True},
        )
    factor = constant_factor(expr, target.expr, names)
    if factor is not None and factor != 1:
        shown = sympy.nsimplify(factor, rational=True) if abs(factor) < 1e6 else factor
        return GradeResult(
            False,
            f"Off by a constant factor: your expression is {sympy.sstr(shown)} × the expected one.",
            parsed=parsed,
        )
    return GradeResult(False, "Not equivalent to the expected expression.", parsed=parsed)
