"""Runs a learner's function on test inputs and reports what it returned — nothing more.

This file runs in the child process next to the submission (a subprocess today, a locked-down
container in the sandbox issue). It is given only the inputs (JSON on stdin), never the expected
values; the verdict is computed by the parent from what this reports (see ``verdict.py``).
It must stay standard-library only (numpy is used if the submission returns arrays).

Protocol: ``python harness.py SUBMISSION.py < {"entry": ..., "cases": [{"id", "args", "kwargs"}]}``
→ one JSON object on stdout: ``{"results": [{"id", "ok", "value"|"error"}]}`` or ``{"fatal": ...}``.
The learner's own prints go to stderr so they cannot mix into the report.
"""

import importlib.util
import json
import math
import os
import sys
import traceback

MAX_OUTPUT_CHARS = 200_000


def encode(value, depth=0):
    """Plain JSON for what a learner's function returns: numbers, lists, arrays, dicts."""
    if depth > 50:
        raise ValueError("result nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v, depth + 1) for k, v in value.items()}
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, jax arrays
    if callable(tolist):
        return encode(tolist(), depth + 1)
    raise TypeError(f"cannot report a value of type {type(value).__name__}")


def curated_traceback(exc, submission_path):
    """Only the frames from the learner's file: the harness is not their business."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == submission_path]
    lines = ["Traceback (most recent call last):\n"]
    lines += [
        f'  File "submission.py", line {f.lineno}, in {f.name}\n' + (f"    {f.line}\n" if f.line else "")
        for f in frames
    ]
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


def main():
    submission_path = os.path.abspath(sys.argv[1])
    request = json.loads(sys.stdin.read())
    report = sys.stdout
    sys.stdout = sys.stderr  # the learner's prints must not reach the report
    try:
        spec = importlib.util.spec_from_file_location("submission", submission_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = getattr(module, request["entry"])
    except BaseException as exc:
        out = {"fatal": f"{type(exc).__name__}: {exc}", "traceback": curated_traceback(exc, submission_path)}
        if isinstance(exc, SyntaxError):
            out["traceback"] = "".join(traceback.format_exception_only(type(exc), exc)).replace(
                submission_path, "submission.py"
            )
        if isinstance(exc, AttributeError):
            out["fatal"] = f"submission.py does not define {request['entry']}()"
        report.write(json.dumps(out))
        report.flush()
        return
    results = []
    for case in request["cases"]:
        try:
            value = fn(*case.get("args", []), **case.get("kwargs", {}))
            results.append({"id": case["id"], "ok": True, "value": encode(value)})
        except Exception as exc:
            results.append(
                {
                    "id": case["id"],
                    "ok": False,
                    "error": f"{type(exc).__name__}: {exc}"[:2000],
                    "traceback": curated_traceback(exc, submission_path)[:4000],
                }
            )
    text = json.dumps({"results": results})
    if len(text) > MAX_OUTPUT_CHARS:
        text = json.dumps({"fatal": "output limit: the function returned too much data"})
    report.write(text)
    report.flush()


if __name__ == "__main__":
    main()
