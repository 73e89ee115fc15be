"""A safe evaluator for the formulas stored with exercises.

Formulas are arithmetic over named givens (``12*L*d**2 + V*d``). They are parsed with ``ast``
and walked node by node against an allow-list: no attribute access, no subscripts, no
comprehensions, no calls except the functions below, and bounded sizes, so a formula can
never run code or exhaust the machine. Integer arithmetic stays exact (parameter counts are
integers); division produces floats.
"""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable, Mapping
from functools import lru_cache

Number = int | float

MAX_SOURCE_LENGTH = 2000
MAX_NODES = 400
MAX_EXPONENT = 1024
MAX_INT_DIGITS = 400

# Byte-size constants so alternates can say "the GiB figure read as GB": kv / GiB * GB.
UNIT_CONSTANTS: dict[str, Number] = {
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
}
CONSTANTS: dict[str, Number] = {"pi": math.pi, "e": math.e, **UNIT_CONSTANTS}


def _round(x: Number, ndigits: Number = 0) -> Number:
    return round(x, int(ndigits))


FUNCTIONS: dict[str, Callable[..., Number]] = {
    "ceil": math.ceil,
    "floor": math.floor,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log2": math.log2,
    "log10": math.log10,
    "sin": math.sin,
    "cos": math.cos,
    "tanh": math.tanh,
    "abs": abs,
    "min": min,
    "max": max,
    "round": _round,
}

RESERVED_NAMES = frozenset(CONSTANTS) | frozenset(FUNCTIONS)


class FormulaError(ValueError):
    """A formula that cannot be parsed or evaluated. The message is meant for authors."""


_BINOPS: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


_COMPARE: dict[type[ast.cmpop], Callable[[Number, Number], bool]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


@lru_cache(maxsize=4096)
def parse(source: str) -> ast.Expression:
    """Parse and validate a formula; the result is cached because formulas are immutable."""
    if not isinstance(source, str) or not source.strip():
        raise FormulaError("empty formula")
    if len(source) > MAX_SOURCE_LENGTH:
        raise FormulaError(f"formula longer than {MAX_SOURCE_LENGTH} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"cannot parse {source!r}: {exc.msg}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise FormulaError(f"formula has more than {MAX_NODES} parts")
    for node in nodes:
        _check_node(node, source)
    return tree


def _check_node(node: ast.AST, source: str) -> None:
    allowed = (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.Constant,
        ast.Name,
        ast.Load,
        ast.Call,
        ast.operator,
        ast.unaryop,
        # Conditions (a variant's `require`, an option's `correct_if`): 1 when true, 0 when false.
        ast.Compare,
        ast.cmpop,
        ast.BoolOp,
        ast.boolop,
    )
    if not isinstance(node, allowed):
        raise FormulaError(f"{type(node).__name__} is not allowed in a formula ({source!r})")
    if isinstance(node, ast.BinOp) and not isinstance(node.op, (*_BINOPS, ast.Pow)):
        raise FormulaError(f"operator {type(node.op).__name__} is not allowed ({source!r})")
    if isinstance(node, ast.Compare) and not all(isinstance(op, tuple(_COMPARE)) for op in node.ops):
        raise FormulaError(f"only <, <=, >, >=, == and != compare ({source!r})")
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, (ast.UAdd, ast.USub, ast.Not)):
        raise FormulaError(f"operator {type(node.op).__name__} is not allowed ({source!r})")
    if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, (int, float))):
        raise FormulaError(f"only numbers may appear as literals ({source!r})")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise FormulaError(f"unknown function in {source!r}; allowed: {', '.join(sorted(FUNCTIONS))}")
        if node.keywords:
            raise FormulaError(f"keyword arguments are not allowed ({source!r})")


def names(source: str) -> set[str]:
    """The variable names a formula refers to (excluding functions and constants)."""
    return set(_names(source))


@functools.lru_cache(maxsize=16384)
def _names(source: str) -> frozenset[str]:
    tree = parse(source)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return frozenset(
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in called and n.id not in CONSTANTS
    )


def evaluate(source: str, variables: Mapping[str, Number]) -> Number:
    """Evaluate a formula over ``variables``. Raises FormulaError; never returns NaN or inf."""
    tree = parse(source)
    try:
        value = _eval(tree.body, variables, source)
    except FormulaError:
        raise
    except ZeroDivisionError:
        raise FormulaError(f"division by zero in {source!r}") from None
    except (OverflowError, ValueError, TypeError) as exc:
        raise FormulaError(f"cannot evaluate {source!r}: {exc}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise FormulaError(f"{source!r} is not a finite number")
    return value


def _eval(node: ast.expr, variables: Mapping[str, Number], source: str) -> Number:
    if isinstance(node, ast.Constant):
        value = node.value
        assert isinstance(value, (int, float))  # guaranteed by _check_node
        return value
    if isinstance(node, ast.Name):
        if node.id in variables:
            return variables[node.id]
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise FormulaError(f"unknown name {node.id!r} in {source!r}")
    if isinstance(node, ast.UnaryOp):
        operand = _eval(node.operand, variables, source)
        if isinstance(node.op, ast.Not):
            return int(not operand)
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.Compare):
        left = _eval(node.left, variables, source)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _eval(comparator, variables, source)
            if not _COMPARE[type(op)](left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, variables, source) for v in node.values)
        return int(all(values)) if isinstance(node.op, ast.And) else int(any(values))
    if isinstance(node, ast.BinOp):
        left = _eval(node.left, variables, source)
        right = _eval(node.right, variables, source)
        if isinstance(node.op, ast.Pow):
            return _power(left, right, source)
        result = _BINOPS[type(node.op)](left, right)
        return _bounded(result, source)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        args = [_eval(arg, variables, source) for arg in node.args]
        return _bounded(FUNCTIONS[node.func.id](*args), source)
    raise FormulaError(f"unsupported expression in {source!r}")  # pragma: no cover - parse() rejects it


def _power(base: Number, exponent: Number, source: str) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise FormulaError(f"exponent {exponent} too large in {source!r}")
    if isinstance(base, int) and isinstance(exponent, int) and exponent >= 0:
        if base not in (0, 1, -1) and exponent * math.log10(abs(base)) > MAX_INT_DIGITS:
            raise FormulaError(f"result too large in {source!r}")
        return int(base**exponent)
    result = float(base) ** float(exponent)
    if isinstance(result, complex):
        raise FormulaError(f"complex result in {source!r}")
    return _bounded(result, source)


def _bounded(value: Number, source: str) -> Number:
    if isinstance(value, int) and abs(value) >= 10**MAX_INT_DIGITS:
        raise FormulaError(f"result too large in {source!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise FormulaError(f"{source!r} is not a finite number")
    return value


def scope_of(givens: Mapping[str, Number], derived: Mapping[str, str]) -> dict[str, Number]:
    """Givens plus every derived value: the names a text's placeholders and formulas may use."""
    return {**givens, **evaluate_all(derived, givens)}


def evaluate_all(formulas: Mapping[str, str], variables: Mapping[str, Number]) -> dict[str, Number]:
    """Evaluate named formulas in dependency order, each seeing the givens and the others.

    Order in the mapping does not matter (PostgreSQL's jsonb does not keep key order); a name
    that is never defined, or a cycle, is an error naming the formulas involved.
    """
    scope: dict[str, Number] = dict(variables)
    out: dict[str, Number] = {}
    pending = {name: names(source) for name, source in formulas.items()}
    while pending:
        ready = [n for n, deps in pending.items() if all(d in scope for d in deps if d != n or d in variables)]
        if not ready:
            stuck = {n: sorted(d for d in deps if d not in scope) for n, deps in pending.items()}
            undefined = sorted({d for deps in stuck.values() for d in deps} - set(pending))
            if undefined:
                first = next(n for n, deps in stuck.items() if set(deps) & set(undefined))
                raise FormulaError(f"unknown name {undefined[0]!r} in {formulas[first]!r}")
            raise FormulaError(f"formulas depend on each other in a cycle: {', '.join(sorted(pending))}")
        for name in ready:
            out[name] = scope[name] = evaluate(formulas[name], scope)
            del pending[name]
    return out
