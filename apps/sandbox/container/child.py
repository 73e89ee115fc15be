"""The learner's process: imports their submission, calls their function on each case's inputs.

Started by ``driver.py`` as ``python -I child.py SUBMISSION``. Reads one JSON line on stdin —
``{"entry": "f", "cases": [{"id", "args", "kwargs", "probe"?}]}`` — and writes one JSON line
per case on its results pipe: ``{"id", "ok": true, "value"}`` or
``{"id", "ok": false, "error", "traceback"}``, or a single ``{"fatal", "traceback"}`` line when
the submission cannot be loaded. It is given inputs only; whether a value is right is decided by
the worker, outside this container.

A case with a ``probe`` reports what the exercise's checker of that name (a function in the
``checks.py`` beside the submission: trusted content) says about the learner's function on those
inputs, instead of the function's value (see ``probes.py``). The checkers and their toolkit are
loaded before the submission and kept out of ``sys.modules``, and the file is deleted, so the
submission cannot simply read, import or patch them.

Values cross the pipe as plain JSON. Arrays (numpy or JAX) travel as ``.npy`` bytes in base64
(``{"__ndarray__": ...}``), loaded with ``allow_pickle=False``; non-finite floats as
``{"__float__": "nan"}``; dict keys as the ``str()`` of their plain-Python form (``(1, 2)`` from
numpy ints reads ``"(1, 2)"``, as Python's own ints do). Standard library only, apart from numpy
when arrays are involved.
"""

import base64
import contextlib
import functools
import importlib.util
import io
import json
import math
import os
import sys
import traceback

MAX_VALUE_CHARS = 4_000_000
HERE = os.path.dirname(os.path.abspath(__file__))


def decode(value):
    """Inputs: JSON, with ``__ndarray__`` and ``__float__`` markers."""
    if isinstance(value, dict):
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        if set(value) == {"__ndarray__"}:
            import numpy as np

            return np.load(io.BytesIO(base64.b64decode(value["__ndarray__"])), allow_pickle=False)
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def encode(value, depth=0):
    """What a learner's function returned, as plain JSON."""
    if depth > 50:
        raise ValueError("the result is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {"__float__": repr(float(value))}
    if isinstance(value, (list, tuple)):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(plain_key(k, depth + 1)): encode(v, depth + 1) for k, v in value.items()}
    if hasattr(value, "__array__") or type(value).__module__.split(".")[0] in ("numpy", "jax", "jaxlib"):
        import numpy as np

        array = np.asarray(value)
        if array.dtype == object:
            raise TypeError("cannot report an array of Python objects")
        if array.ndim == 0:
            return encode(array.item(), depth + 1)
        buf = io.BytesIO()
        np.save(buf, array, allow_pickle=False)
        return {"__ndarray__": base64.b64encode(buf.getvalue()).decode("ascii")}
    raise TypeError(f"cannot report a value of type {type(value).__name__}")


def plain_key(key, depth=0):
    """A dict key with its numpy scalars made the Python values they equal, before ``str()``.

    Keys are reported as their ``str()``, and numpy 2 spells a scalar inside a tuple as
    ``np.int64(1)``: ``(1, 2)`` built from numpy ints would read ``"(np.int64(1), np.int64(2))"``
    and fail against the reference's ``"(1, 2)"``, though Python holds the two keys equal.
    """
    if depth > 50:
        raise ValueError("a dict key is nested too deeply")
    if isinstance(key, tuple):
        return tuple(plain_key(k, depth + 1) for k in key)
    if type(key).__module__.split(".")[0] == "numpy" and callable(getattr(key, "item", None)):
        return key.item()
    return key


def curated_traceback(exc, submission_path):
    """Only the frames from the learner's file: the harness is not their business."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == submission_path]
    lines = ["Traceback (most recent call last):\n"]
    lines += [
        f'  File "submission.py", line {f.lineno}, in {f.name}\n' + (f"    {f.line}\n" if f.line else "")
        for f in frames
    ]
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).replace(submission_path, "submission.py")


def load_checkers(path, names):
    """The exercise's checker functions, by name, loaded (with their toolkit) before the submission."""
    tools_spec = importlib.util.spec_from_file_location("sandbox_probes", os.path.join(HERE, "probes.py"))
    tools = importlib.util.module_from_spec(tools_spec)
    # checks.py imports the toolkit by this name; it leaves sys.modules before the submission loads.
    sys.modules["sandbox_probes"] = tools
    try:
        tools_spec.loader.exec_module(tools)
        spec = importlib.util.spec_from_file_location("exercise_checks", path)
        checks = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(checks)
    finally:
        sys.modules.pop("sandbox_probes", None)
        with contextlib.suppress(OSError):
            os.unlink(path)
    missing = sorted(n for n in names if not callable(getattr(checks, n, None)))
    if missing:
        raise LookupError(f"checks.py has no checker named {', '.join(missing)}")
    return {n: getattr(checks, n) for n in names}, tools


def warm_up(modules):
    """Import ahead what the exercise's code imports (and start JAX's CPU backend), for a pooled
    container: its job then finds them done. One that fails here fails again in the learner's own
    import, with their traceback. Importing is safe before the learner's code forks; nothing else
    is run."""
    done = []
    for name in modules:
        try:
            importlib.import_module(name)
            if name == "jax":
                importlib.import_module("jax.numpy").zeros(()).block_until_ready()
            done.append(name)
        except Exception:  # noqa: S112 - see the docstring
            continue
    return done


def main():
    args = sys.argv[1:]
    if args[0] == "--warm":
        done = warm_up([m for m in args[1].split(",") if m])
        os.write(1, json.dumps({"warm": done}).encode() + b"\n")
        args = args[2:]
    submission_path = os.path.abspath(args[0])
    request = json.loads(sys.stdin.readline())
    # fd 1 is the results pipe. Keep a private copy and point fd 1 at the prints pipe, so that
    # print(), sys.stdout and os.write(1, ...) from the learner's code all land with the prints.
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def emit(item):
        results.write(json.dumps(item) + "\n")
        results.flush()

    probes = sorted({c["probe"] for c in request["cases"] if c.get("probe")})
    checkers, tools = {}, None
    if probes:
        try:
            checkers, tools = load_checkers(os.path.join(os.path.dirname(submission_path), "checks.py"), probes)
            tools.mark_baseline()
        except BaseException as exc:
            emit({"fatal": f"the exercise's checks could not be loaded: {type(exc).__name__}: {exc}", "traceback": ""})
            return
    try:
        spec = importlib.util.spec_from_file_location("submission", submission_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["submission"] = module
        spec.loader.exec_module(module)
        fn = getattr(module, request["entry"], None)
        if not callable(fn):
            emit({"fatal": f"submission.py does not define {request['entry']}()", "traceback": ""})
            return
    except BaseException as exc:
        if isinstance(exc, SyntaxError):
            text = "".join(traceback.format_exception_only(type(exc), exc))
        else:
            text = curated_traceback(exc, submission_path)
        emit({"fatal": f"{type(exc).__name__}: {exc}".replace(submission_path, "submission.py"), "traceback": text})
        return
    for case in request["cases"]:
        try:
            call = functools.partial(checkers[case["probe"]], module, fn) if case.get("probe") else fn
            value = call(*decode(case.get("args", [])), **decode(case.get("kwargs", {})))
            item = {"id": case["id"], "ok": True, "value": encode(value)}
            if len(json.dumps(item)) > MAX_VALUE_CHARS:
                item = {"id": case["id"], "ok": False, "error": "the function returned too much data"}
        except Exception as exc:
            error, shown = f"{type(exc).__name__}: {exc}", exc
            if tools is not None and isinstance(exc, tools.ProbeError):
                # The probe's own words, and the learner's frames of what went wrong underneath.
                error, shown = str(exc), exc.__cause__ or exc
            item = {
                "id": case["id"],
                "ok": False,
                "error": error[:2000],
                "traceback": curated_traceback(shown, submission_path)[:4000],
            }
        emit(item)
    # Every result is out: end now. Tearing the interpreter down (JAX's backend, numpy, atexit
    # hooks) would only delay the verdict, and nothing the learner leaves running can change it.
    for stream in (sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            stream.flush()
    results.close()
    os._exit(0)


if __name__ == "__main__":
    main()
