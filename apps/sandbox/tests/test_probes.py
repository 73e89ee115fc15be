"""Probe cases: hidden tests on HOW a learner's function computes, not only on what it returns.

Where a prompt mandates or forbids a construct (jax.vmap and no Python loop, jax.grad, a Pallas
kernel, a collective over the devices, plain Python), a probe case names a checker in the
exercise's ``checks.py``; the checker reports facts read from the program JAX traces, and the
worker compares them with the expected facts as it compares values. The first tests here need
no Docker (the verdict, the content checks, the driver as a local subprocess); the last ones run
each plausible violation, and each reference, through the real image, two containers at a time.
"""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from apps.exercises.content.loader import Expected, load_workbook, read_cases
from apps.exercises.content.report import DEFAULT_ROOT, check_workbooks
from apps.exercises.content.schema import CodeCase, CodeSpec
from apps.exercises.jobs import code_cases, code_job, fixed_only, limits_for, probe_problems
from apps.sandbox import selectors as sandbox_selectors
from apps.sandbox.runner import DockerRunner, Limits
from apps.sandbox.tests.conftest import Sandbox
from apps.sandbox.verdict import Case, CaseResult, Verdict, decide, judge

REQUIREMENT = "f must map g over the batch with jax.vmap; a Python loop is not allowed."
PROBE = Case(
    "uses_vmap", [[1.0, 2.0]], {}, {"vmap": True, "loop_free": True}, probe="vmap_check", requirement=REQUIREMENT
)
SHOWN = '{"vmap": true, "loop_free": true}'


def _probe(value: Any = None, **reported: Any) -> list[CaseResult]:
    return decide([{"id": "uses_vmap", "ok": True, "value": value, **reported}], [PROBE], "f")


def test_a_probe_sends_its_checker_name_and_inputs_never_its_expected_facts() -> None:
    assert PROBE.inputs() == {"id": "uses_vmap", "args": [[1.0, 2.0]], "kwargs": {}, "probe": "vmap_check"}
    assert "probe" not in Case("plain", [1], {}, 2).inputs()


def test_probe_facts_are_compared_like_values_and_only_the_asked_ones_are_shown() -> None:
    passed = _probe({"vmap": True, "loop_free": True, "sizes": [5, 5, 5], "note": ""})
    assert passed == [CaseResult("uses_vmap", True, "f([1.0, 2.0])", "", SHOWN, SHOWN, category="")]
    failed = _probe({"vmap": False, "loop_free": False, "sizes": [5, 9, 17], "note": "a Python loop."})
    assert failed == [
        CaseResult(
            "uses_vmap",
            False,
            "f([1.0, 2.0])",
            f"{REQUIREMENT} Found: a Python loop.",
            SHOWN,
            '{"vmap": false, "loop_free": false}',
            category="probe",
        )
    ]


def test_a_probe_missing_a_fact_or_reporting_nothing_fails_with_the_requirement() -> None:
    missing = _probe({"vmap": True})[0]
    assert (missing.passed, missing.message, missing.got) == (False, REQUIREMENT, '{"vmap": true}')
    nothing = _probe([True, True])[0]
    assert (nothing.passed, nothing.message) == (False, f"{REQUIREMENT} The check reported nothing.")
    raised = decide([{"id": "uses_vmap", "ok": False, "error": "KeyError: 'w'"}], [PROBE], "f")[0]
    assert (raised.passed, raised.message) == (False, f"{REQUIREMENT} The check could not run: KeyError: 'w'")


CHECKER = """
from sandbox_probes import third_party_modules


def plain_python(submission, fn, *args, **kwargs):
    fn(*args, **kwargs)
    modules = third_party_modules()
    return {"third_party_modules": modules, "note": f"it imports {', '.join(modules)}." if modules else ""}
"""
PLAIN = "plain_python_only"
PLAIN_REQUIREMENT = "mean must use plain Python only: no NumPy."


def _mean_spec(**probe: Any) -> CodeSpec:
    cases = [
        CodeCase(id=f"c{i}", args=[xs], expected=sum(xs) / len(xs)) for i, xs in enumerate([[1, 2], [4], [1, 1, 4]])
    ]
    probe_case = {"id": PLAIN, "args": [[1, 2]], "probe": "plain_python", "expected": {"third_party_modules": []}}
    probe_case["requirement"] = PLAIN_REQUIREMENT
    return CodeSpec(
        entry="mean",
        dir="mean",
        starter="def mean(xs):\n    return 0\n",
        solution="def mean(xs):\n    return sum(xs) / len(xs)\n",
        checker=CHECKER,
        cases=[*cases, CodeCase(**{**probe_case, **probe})],
    )


def test_content_checks_name_every_unsound_probe_case() -> None:
    assert probe_problems(_mean_spec()) == []
    assert probe_problems(_mean_spec(probe="plain")) == [
        f"probe case {PLAIN} names an unknown checker 'plain' (not in checks.py)"
    ]
    assert probe_problems(_mean_spec(expected=None, requirement=" ")) == [
        f"probe case {PLAIN} needs its expected facts written out, as a non-empty dict",
        f"probe case {PLAIN} needs a requirement: the failure message, in plain words",
    ]
    assert probe_problems(_mean_spec().model_copy(update={"checker": ""})) == [
        "probe cases need a checks.py beside tests.py"
    ]
    assert probe_problems(_mean_spec().model_copy(update={"checker": "def (:"}))[0].startswith(
        "checks.py does not parse"
    )


def _run_sandboxed(spec: CodeSpec, source: str) -> Verdict:
    return judge(
        sandbox_selectors.runner("tests").run(code_job(spec, source), Limits(time_s=20.0)), code_cases(spec), spec.entry
    )


def test_a_plain_python_probe_runs_beside_the_values_and_hides_from_the_submission() -> None:
    spec = _mean_spec()
    assert _run_sandboxed(spec, spec.solution).outcome == "passed"
    snooping = (
        "import os, sys\nimport numpy as np\n"
        "print(os.path.exists('checks.py'), 'sandbox_probes' in sys.modules, 'exercise_checks' in sys.modules)\n"
        "def mean(xs):\n    return float(np.mean(xs))\n"
    )
    verdict = _run_sandboxed(spec, snooping)
    assert verdict.outcome == "failed"
    assert [c.id for c in verdict.cases if not c.passed] == [PLAIN]
    probe = verdict.cases[-1]
    assert probe.message == f"{PLAIN_REQUIREMENT} Found: it imports numpy."
    assert probe.got == '{"third_party_modules": ["numpy"]}'
    assert verdict.prints.strip() == "False False False"  # the file is gone, the modules out of reach


def test_check_content_refuses_a_probe_with_an_unknown_checker_or_no_expected_facts(tmp_path: Path) -> None:
    book = tmp_path / "transformer-math"
    shutil.copytree(DEFAULT_ROOT / "transformer-math", book)
    tests = book / "code" / "1.6-scaled-dot-product" / "tests.py"
    cases = read_cases(tests)
    probe = next(c for c in cases if c.get("probe"))
    cases.append({**probe, "id": "unknown_checker", "probe": "no_such_check"})
    cases.append({k: v for k, v in probe.items() if k != "expected"} | {"id": "no_expected"})
    tests.write_text(f"CASES = {cases!r}\n")
    report = check_workbooks(
        tmp_path, ["transformer-math"], runner=sandbox_selectors.runner("tests"), chapter_glob="01-*", consistency=False
    )[0]
    assert any("unknown_checker names an unknown checker 'no_such_check'" in p for p in report.problems)
    assert any("no_expected needs its expected facts written out" in p for p in report.problems)
    # The loader never computes a probe's expected facts from the reference: they state the requirement.
    spec = load_workbook(book, expected=Expected(runner=sandbox_selectors.runner("tests")), chapter_glob="01-*")
    code = next(e.code for c in spec.chapters for e in c.exercises if e.number == "1.6")
    assert code is not None and next(c for c in code.cases if c.id == "no_expected").expected is None


# ---- the real image ------------------------------------------------------------------------


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip()


PREDICT = """
    import jax
    import jax.numpy as jnp


    def predict_single(params, x):
        return jnp.dot(params["w"], x) + params["b"]


    def predict_batch(params, xs):
        params = {"w": jnp.asarray(params["w"], jnp.float32), "b": jnp.asarray(params["b"], jnp.float32)}
        xs = jnp.asarray(xs, jnp.float32)
        return BODY
"""
PER_EXAMPLE = """
    import jax
    import jax.numpy as jnp


    def loss_single(params, x, y):
        return (jnp.dot(params["w"], x) + params["b"] - y) ** 2


    def per_example_grads(params, xs, ys):
        params = {"w": jnp.asarray(params["w"], jnp.float32), "b": jnp.asarray(params["b"], jnp.float32)}
        xs, ys = jnp.asarray(xs, jnp.float32), jnp.asarray(ys, jnp.float32)
        BODY
"""
TRAIN = """
    import jax
    import jax.numpy as jnp


    def loss_fn(params, X, y):
        return jnp.mean((X @ params["w"] + params["b"] - y) ** 2)


    @jax.jit
    def step(params, X, y, lr):
        BODY


    def train_linear_regression(X, y, lr, steps):
        X, y = jnp.asarray(X, jnp.float32), jnp.asarray(y, jnp.float32)
        params = {"w": jnp.zeros((X.shape[1], 1), jnp.float32), "b": jnp.zeros((1,), jnp.float32)}
        losses = []
        for _ in range(steps):
            params, loss = step(params, X, y, lr)
            losses.append(loss)
        return {"w": params["w"], "b": params["b"], "losses": jnp.asarray(losses, jnp.float32)}
"""


def fill(template: str, body: str) -> str:
    indent = next(line for line in template.splitlines() if "BODY" in line).index("BODY")
    return src(template.replace("BODY", textwrap.indent(src(body), " " * indent).strip()))


@dataclass(frozen=True)
class Violation:
    """A plausible wrong solution: right values, the construct the prompt asks for missing."""

    workbook: str
    number: str
    what: str
    source: str
    facts: dict[str, Any]  # what the probe must report about it

    def __str__(self) -> str:
        return f"{self.number} {self.what}"


VIOLATIONS = [
    Violation(
        "scaling-book",
        "9.8",
        "a Python loop over the rows",
        fill(PREDICT, "jnp.stack([predict_single(params, x) for x in xs])"),
        {"vmap": False, "same_program_for_every_batch_size": False},
    ),
    Violation(
        "scaling-book",
        "9.8",
        "xs @ w + b, no vmap",
        fill(PREDICT, 'xs @ params["w"] + params["b"]'),
        {"vmap": False, "arithmetic_outside_vmap": ["add", "dot_general"]},
    ),
    Violation(
        "scaling-book",
        "9.8",
        "cheap attacks: a fake make_jaxpr, a loop posing as jax.vmap under a named scope",
        src(
            """
            import jax
            import jax.numpy as jnp

            jax.make_jaxpr = lambda fn, *a, **k: (lambda *args, **kw: None)


            def loop_vmap(fn, in_axes=0, **kwargs):
                def mapped(params, xs):
                    with jax.named_scope("vmap"):
                        return jnp.stack([fn(params, x) for x in xs])
                return mapped


            jax.vmap = loop_vmap


            def predict_single(params, x):
                return jnp.dot(params["w"], x) + params["b"]


            def predict_batch(params, xs):
                params = {"w": jnp.asarray(params["w"], jnp.float32), "b": jnp.asarray(params["b"], jnp.float32)}
                return jax.vmap(predict_single, in_axes=(None, 0))(params, jnp.asarray(xs, jnp.float32))
            """
        ),
        {"vmap": False, "same_program_for_every_batch_size": False},
    ),
    Violation(
        "scaling-book",
        "9.9",
        "a Python loop of jax.grad",
        fill(
            PER_EXAMPLE,
            """
            grads = [jax.grad(loss_single)(params, x, y) for x, y in zip(xs, ys)]
            return {"w": jnp.stack([g["w"] for g in grads]), "b": jnp.stack([g["b"] for g in grads])}
            """,
        ),
        {"vmap": False, "same_program_for_every_batch_size": False},
    ),
    Violation(
        "scaling-book",
        "9.9",
        "a hand-written gradient under vmap",
        fill(
            PER_EXAMPLE,
            """
            def one(x, y):
                r = jnp.dot(params["w"], x) + params["b"] - y
                return {"w": 2 * r * x, "b": 2 * r}

            return jax.vmap(one)(xs, ys)
            """,
        ),
        {"vmap": True, "grad_inside_vmap": False},
    ),
    Violation(
        "scaling-book",
        "9.1",
        "a hand-written gradient (and a jax.grad thrown away)",
        fill(
            TRAIN,
            """
            jax.grad(loss_fn)(params, X, y)  # computed, never used: dead code does not count
            r = X @ params["w"] + params["b"] - y
            grads = {"w": 2.0 / X.shape[0] * X.T @ r, "b": 2.0 / X.shape[0] * jnp.sum(r, axis=0)}
            return jax.tree.map(lambda p, g: p - lr * g, params, grads), jnp.mean(r**2)
            """,
        ),
        {"gradient_by_autodiff": False, "update_with_tree_map": True},
    ),
    Violation(
        "scaling-book",
        "9.1",
        "jax.grad but no jax.tree.map",
        fill(
            TRAIN,
            """
            loss, grads = jax.value_and_grad(loss_fn)(params, X, y)
            return {k: params[k] - lr * grads[k] for k in params}, loss
            """,
        ),
        {"gradient_by_autodiff": True, "update_with_tree_map": False},
    ),
    Violation(
        "scaling-book",
        "9.5",
        "a Python loop over the shards, averaged without a collective",
        src(
            """
            import jax
            import jax.numpy as jnp


            def loss_fn(params, X, y):
                return jnp.mean((X @ params["w"] + params["b"] - y) ** 2)


            def data_parallel_train(params, X, y, lr, steps):
                n_dev = jax.local_device_count()
                params = {k: jnp.asarray(v, dtype=jnp.float32) for k, v in params.items()}
                X_shards = jnp.asarray(X, jnp.float32).reshape(n_dev, -1, len(X[0]))
                y_shards = jnp.asarray(y, jnp.float32).reshape(n_dev, -1, 1)
                losses = []
                for _ in range(steps):
                    pairs = [jax.value_and_grad(loss_fn)(params, a, b) for a, b in zip(X_shards, y_shards)]
                    mean = jax.tree.map(lambda *g: sum(g) / n_dev, *[g for _, g in pairs])
                    params = jax.tree.map(lambda p, g: p - lr * g, params, mean)
                    losses.append(jnp.stack([loss for loss, _ in pairs]))
                stacked = jnp.stack(losses) if losses else jnp.zeros((0, n_dev))
                return {"w": params["w"], "b": params["b"], "losses": stacked}
            """
        ),
        {"devices": 0, "collective": False},
    ),
    Violation(
        "scaling-book",
        "9.7",
        "x + y, no kernel",
        src(
            """
            import jax.numpy as jnp


            def add_vectors(x, y, block_size):
                return jnp.asarray(x, jnp.float32) + jnp.asarray(y, jnp.float32)
            """
        ),
        {"pallas_call": False, "arithmetic_outside_kernel": ["add"]},
    ),
    Violation(
        "scaling-book",
        "10.3",
        "param_count from jax.eval_shape of init_params",
        (DEFAULT_ROOT / "scaling-book/code/10.3-addition-params/solution.py")
        .read_text()
        .replace(
            'def param_count(config):\n    """The same total in closed form."""\n',
            'def param_count(config):\n    """The same total in closed form."""\n'
            "    shapes = jax.eval_shape(lambda key: init_params(config, key), jax.random.key(0))\n"
            "    return sum(leaf.size for leaf in jax.tree.leaves(shapes))\n",
        ),
        {"param_count_calls_init_params": True},
    ),
    Violation(
        "transformer-math",
        "1.6",
        "NumPy",
        src(
            """
            import numpy as np


            def scaled_dot_product(q, keys, values):
                q, k, v = np.asarray(q), np.asarray(keys), np.asarray(values)
                w = np.exp(k @ q / np.sqrt(len(q)) - (k @ q / np.sqrt(len(q))).max())
                return (w / w.sum() @ v).tolist()
            """
        ),
        {"third_party_modules": ["numpy"]},
    ),
]
CHAPTERS = {"scaling-book": ("09-*", "10-*"), "transformer-math": ("01-*",)}


def _code_specs() -> dict[tuple[str, str], CodeSpec]:
    """Every exercise with probes, read from the fixtures as the platform syncs them."""
    specs = {}
    runner = sandbox_selectors.runner("tests")
    for slug, globs in CHAPTERS.items():
        for chapter_glob in globs:
            book = load_workbook(DEFAULT_ROOT / slug, expected=Expected(runner=runner), chapter_glob=chapter_glob)
            for exercise in (e for c in book.chapters for e in c.exercises):
                if exercise.code is not None and any(case.probe for case in exercise.code.cases):
                    specs[(slug, exercise.number)] = exercise.code
    return specs


def _run_all(image: str, jobs: list[tuple[CodeSpec, str]]) -> list[Verdict]:
    """Two containers at a time (one per core), each runner on its own thread and CPU."""
    runners = [DockerRunner(image, owner="probe-tests") for _ in range(2)]

    def run(index: int, code: CodeSpec, source: str) -> Verdict:
        code = fixed_only(code)  # probes and fixed cases: random draws are test_hidden_tests.py's
        result = runners[index % 2].run(code_job(code, source), limits_for(code, slot=index % 2))
        return judge(result, code_cases(code), code.entry)

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(run, i, code, source) for i, (code, source) in enumerate(jobs)]
        return [f.result() for f in futures]


@pytest.mark.slow
def test_each_enforced_construct_fails_its_plausible_violation_and_passes_the_reference(sandbox_image: str) -> None:
    specs = _code_specs()
    assert {n for _, n in specs} == {"1.6", "9.1", "9.3", "9.5", "9.7", "9.8", "9.9", "10.3"}
    references = [(code, code.solution) for code in specs.values()]
    violations = [(specs[(v.workbook, v.number)], v.source) for v in VIOLATIONS]
    verdicts = _run_all(sandbox_image, references + violations)

    for (slug, number), verdict in zip(specs, verdicts[: len(references)], strict=True):
        assert verdict.outcome == "passed", (slug, number, verdict.message, [c for c in verdict.cases if not c.passed])

    for violation, verdict in zip(VIOLATIONS, verdicts[len(references) :], strict=True):
        code = specs[(violation.workbook, violation.number)]
        probes = {c.id: c for c in code.cases if c.probe}
        # Every value is right; only the probe tells the violation apart.
        assert verdict.outcome == "failed", (str(violation), verdict.message, verdict.traceback)
        failing = [c for c in verdict.cases if not c.passed]
        # (An exercise may have several probes; 10.3's second one checks init_params's values.)
        assert failing and all(c.id in probes for c in failing), (str(violation), failing)
        result = failing[0]
        requirement = probes[result.id].requirement
        assert result.message.startswith(f"{requirement} Found: "), (str(violation), result.message)
        for fact, value in violation.facts.items():
            assert f'"{fact}": {_json(value)}' in result.got, (str(violation), fact, result.got)
        # The message names the requirement and what was found: no value any test expects.
        for case in code.cases:
            if not case.probe and isinstance(case.expected, (list, dict)):
                assert _json(case.expected)[:12] not in result.message


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


# ---- through the API, as a learner sees it --------------------------------------------------


def _until_graded(client: APIClient, url: str, timeout: float = 90.0) -> dict[str, Any]:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(url).json()
        if body["status"] in ("graded", "not_graded"):
            return body
        time.sleep(0.1)
    raise AssertionError(f"{url} was not graded in {timeout}s")


@pytest.mark.slow
def test_the_learner_sees_the_requirement_in_the_per_test_results(sandbox: Sandbox) -> None:
    client = APIClient()
    client.force_authenticate(sandbox.user)
    url = "/api/v1/workbooks/scaling-book/exercises/9.8/attempts/"
    post: Callable[[], Any] = partial(client.post, url, {"code": VIOLATIONS[0].source}, format="json")
    response = sandbox._committed(post)
    assert response.status_code == 202, response.json()
    body = _until_graded(client, response.json()["url"])
    assert (body["status"], body["verdict"], body["outcome"]) == ("graded", "incorrect", "failed")
    tests = body["details"]["tests"]
    probe = tests[0]  # failing first
    assert probe["passed"] is False and all(t["passed"] for t in tests[1:])
    assert probe["message"].startswith("predict_batch must map predict_single over the batch with jax.vmap")
    assert "a Python loop" in probe["message"]
    # A hidden test: its label and the requirement, never its call or expected facts.
    assert probe == {
        "label": probe["label"], "example": False, "passed": False, "category": "probe", "message": probe["message"]
    }  # fmt: skip
    assert probe["label"].startswith("Hidden test ")
    assert body["details"]["message"] == f"1 of {len(tests)} tests failed."
