"""Random test inputs: a hidden test whose inputs are drawn afresh for each attempt.

A case in ``tests.py`` may say ``"random": {...}`` instead of ``args``/``kwargs``: a description of
its inputs, data only (read with ``ast.literal_eval`` like the rest of CASES; nothing in it runs).
The worker draws the inputs with a numpy ``Generator`` seeded from the attempt (the seed is kept
with the attempt, so an instructor can draw them again), the exercise's reference solution
computes the expected values in the sandbox, and only then does the learner's code run on them.
No lookup table of inputs seen before can pass such a test.

The description::

    {"dims": {"n": {"int": [1, 6]}, "d": {"int": [1, 8]}},   # optional: sizes drawn first, in order
     "args": [<gen>, ...], "kwargs": {"name": <gen>}}

where a ``<gen>`` is one of::

    {"int": [lo, hi]}                       an int in [lo, hi] (inclusive); lo, hi may name a dim
    {"float": [lo, hi], "digits": 3}        uniform in [lo, hi), rounded to ``digits`` decimals if given
    {"normal": [mean, sd], "digits": 3}     normal
    {"choice": [v1, v2, ...]}               one of the values (any JSON)
    {"list": <gen>, "len": n | [lo, hi] | "dim"}        a list, each element drawn
    {"array": <gen>, "shape": [n | "dim", ...], "dtype": "float64"}  a numpy array of numbers
    {"dict": {"key": <gen>, ...}}           a dict, each value drawn
    {"const": value}                        the value itself
    a number, string, bool or null          itself
"""

from __future__ import annotations

import base64
import io
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

MAX_ELEMENTS = 20_000  # drawn numbers per case, at most (arrays and lists together)
DTYPES = frozenset({"float64", "float32", "int64", "int32"})
_KINDS = ("int", "float", "normal", "choice", "list", "array", "dict", "const")


class DrawError(ValueError):
    """A random case's description that cannot be drawn from; says where."""


def _bound(value: Any, dims: Mapping[str, int], where: str) -> int:
    if isinstance(value, str):
        if value not in dims:
            raise DrawError(f"{where}: unknown dim {value!r}")
        return dims[value]
    if isinstance(value, bool) or not isinstance(value, int):
        raise DrawError(f"{where}: a size or int bound is an int or a dim's name, not {value!r}")
    return value


def _pair(gen: Mapping[str, Any], kind: str, where: str) -> tuple[Any, Any]:
    pair = gen[kind]
    if not isinstance(pair, list) or len(pair) != 2:
        raise DrawError(f"{where}: {kind} takes [lo, hi]")
    return pair[0], pair[1]


def _length(value: Any, dims: Mapping[str, int], rng: np.random.Generator | None, where: str) -> int:
    if isinstance(value, list):
        if len(value) != 2:
            raise DrawError(f"{where}: len takes n, [lo, hi] or a dim's name")
        lo, hi = _bound(value[0], dims, where), _bound(value[1], dims, where)
        if not 0 <= lo <= hi:
            raise DrawError(f"{where}: len [lo, hi] needs 0 <= lo <= hi")
        return hi if rng is None else int(rng.integers(lo, hi + 1))
    n = _bound(value, dims, where)
    if n < 0:
        raise DrawError(f"{where}: a negative length")
    return n


def _number(x: float, gen: Mapping[str, Any]) -> float:
    digits = gen.get("digits")
    value = float(x)
    return round(value, int(digits)) if isinstance(digits, int) and not isinstance(digits, bool) else value


def _draw(gen: Any, dims: Mapping[str, int], rng: np.random.Generator | None, where: str) -> tuple[Any, int]:
    """A value and how many numbers it holds. ``rng`` None: check only, with every size at its
    largest (so the element count is the bound)."""
    if gen is None or isinstance(gen, (bool, int, float, str)):
        return gen, 1
    if not isinstance(gen, dict):
        raise DrawError(f"{where}: a generator is a dict such as {{'int': [0, 9]}}, not {gen!r}")
    kinds = [k for k in _KINDS if k in gen]
    if len(kinds) != 1:
        raise DrawError(f"{where}: a generator names exactly one of {', '.join(_KINDS)}")
    kind = kinds[0]
    extra = set(gen) - {kind, "digits", "len", "shape", "dtype"}
    if extra:
        raise DrawError(f"{where}: unknown keys {sorted(extra)}")
    if kind == "const":
        return gen["const"], 1
    if kind == "int":
        lo, hi = (_bound(b, dims, where) for b in _pair(gen, kind, where))
        if lo > hi:
            raise DrawError(f"{where}: int [lo, hi] needs lo <= hi")
        return (hi if rng is None else int(rng.integers(lo, hi + 1))), 1
    if kind in ("float", "normal"):
        a, b = _pair(gen, kind, where)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
            raise DrawError(f"{where}: {kind} takes two numbers")
        if (kind == "float" and not a < b) or (kind == "normal" and b < 0):
            raise DrawError(f"{where}: float needs lo < hi; normal a standard deviation >= 0")
        if rng is None:
            return float(a), 1
        return _number(rng.uniform(a, b) if kind == "float" else rng.normal(a, b), gen), 1
    if kind == "choice":
        options = gen["choice"]
        if not isinstance(options, list) or not options:
            raise DrawError(f"{where}: choice takes a non-empty list")
        return (options[0] if rng is None else options[int(rng.integers(0, len(options)))]), 1
    if kind == "dict":
        items = gen["dict"]
        if not isinstance(items, dict):
            raise DrawError(f"{where}: dict takes a mapping of key to generator")
        out, count = {}, 0
        for key, sub in items.items():
            out[str(key)], n = _draw(sub, dims, rng, f"{where}.{key}")
            count += n
        return out, count
    if kind == "list":
        n = _length(gen.get("len", 0), dims, rng, f"{where}.len")
        values, count = [], 0
        for i in range(n):
            value, k = _draw(gen["list"], dims, rng, f"{where}[{i}]")
            values.append(value)
            count += k
            if count > MAX_ELEMENTS:
                raise DrawError(f"{where}: more than {MAX_ELEMENTS} numbers")
        return values, count
    # array
    shape_spec = gen.get("shape")
    if not isinstance(shape_spec, list):
        raise DrawError(f"{where}: array needs a shape, a list of sizes")
    shape = [_length(s, dims, rng, f"{where}.shape") for s in shape_spec]
    dtype = str(gen.get("dtype", "float64"))
    if dtype not in DTYPES:
        raise DrawError(f"{where}: dtype must be one of {sorted(DTYPES)}")
    size = int(np.prod(shape)) if shape else 1
    if size > MAX_ELEMENTS:
        raise DrawError(f"{where}: more than {MAX_ELEMENTS} numbers")
    flat = [_draw(gen["array"], dims, rng, f"{where}[]")[0] for _ in range(size)]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        raise DrawError(f"{where}: an array's elements are numbers")
    return array_marker(np.asarray(flat, dtype=dtype).reshape(shape)), size


def array_marker(array: np.ndarray[Any, Any]) -> dict[str, str]:
    """An array as the sandbox's inputs carry it: ``.npy`` bytes in base64 (no pickles)."""
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    return {"__ndarray__": base64.b64encode(buf.getvalue()).decode("ascii")}


def _draw_case(spec: Any, rng: np.random.Generator | None, where: str) -> tuple[list[Any], dict[str, Any]]:
    if not isinstance(spec, dict):
        raise DrawError(f"{where}: random takes a mapping with args (and kwargs, dims)")
    extra = set(spec) - {"dims", "args", "kwargs"}
    if extra:
        raise DrawError(f"{where}: unknown keys {sorted(extra)}")
    dims: dict[str, int] = {}
    raw_dims = spec.get("dims", {})
    if not isinstance(raw_dims, dict):
        raise DrawError(f"{where}.dims: a mapping of name to an int generator")
    for name, gen in raw_dims.items():
        value, _ = _draw(gen, dims, rng, f"{where}.dims.{name}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise DrawError(f"{where}.dims.{name}: a dim is a non-negative int")
        dims[str(name)] = value
    raw_args, raw_kwargs = spec.get("args", []), spec.get("kwargs", {})
    if not isinstance(raw_args, list) or not isinstance(raw_kwargs, dict):
        raise DrawError(f"{where}: args is a list of generators, kwargs a mapping")
    args, kwargs, total = [], {}, 0
    for i, gen in enumerate(raw_args):
        value, n = _draw(gen, dims, rng, f"{where}.args[{i}]")
        args.append(value)
        total += n
    for key, gen in raw_kwargs.items():
        kwargs[str(key)], n = _draw(gen, dims, rng, f"{where}.kwargs.{key}")
        total += n
    if total > MAX_ELEMENTS:
        raise DrawError(f"{where}: more than {MAX_ELEMENTS} numbers at the largest sizes")
    return args, kwargs


def problems(spec: Any, where: str = "random") -> list[str]:
    """What is wrong with a random case's description (checked at the largest sizes), if anything."""
    try:
        _draw_case(spec, None, where)
    except DrawError as exc:
        return [str(exc)]
    return []


def rng_for(seed: int, case_id: str) -> np.random.Generator:
    """The generator of one case in one attempt: its own stream, so adding a case changes no other's draw."""
    return np.random.default_rng([seed, zlib.crc32(case_id.encode())])


def draw(spec: Any, *, seed: int, case_id: str) -> tuple[list[Any], dict[str, Any]]:
    """A random case's inputs for the attempt whose seed this is: the same seed, the same inputs."""
    return _draw_case(spec, rng_for(seed, case_id), case_id)
