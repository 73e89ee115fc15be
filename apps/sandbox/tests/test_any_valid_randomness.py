"""scaling-book 9.3's hidden tests accept any valid randomness the prompt leaves open (issue 15).

The prompt fixes how X is drawn (the first subkey of the seed's split) but not which key the noise
comes from, so the tests compare X value by value and judge the noise by its statistics, in a
probe (``code/9.3-prng-key-bug/checks.py``). Each alternative below draws valid independent noise
another way and must pass in the real image; the original bug, the noise drawn with X's key, must
still fail every noise probe while the noiseless case, where it cannot show, passes.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from apps.exercises.content.loader import Expected, load_workbook
from apps.exercises.content.report import DEFAULT_ROOT
from apps.exercises.content.schema import CodeSpec
from apps.exercises.jobs import code_cases, code_job, limits_for
from apps.sandbox.runner import DockerRunner
from apps.sandbox.verdict import Verdict, judge

NOISE = "    eps = jax.random.normal(noise_key, (n, 1), dtype=jnp.float32)\n"
# Other valid ways to draw the noise, each a one-line change to the reference.
ALTERNATIVES = {
    "a key folded from the seed's key": "jax.random.fold_in(key, 7)",
    "a third subkey": "jax.random.split(key, 3)[2]",
    "the next seed's key": "jax.random.PRNGKey(seed + 1)",
}
SEEDED_NUMPY = "    eps = jnp.asarray(np.random.default_rng(seed).standard_normal((n, 1)), dtype=jnp.float32)\n"


def _make_data(sandbox_image: str) -> CodeSpec:
    # 9.3's hidden no-noise case takes its expected value from solution.py, run in the sandbox.
    runner = DockerRunner(sandbox_image, owner="randomness-tests")
    book = load_workbook(DEFAULT_ROOT / "scaling-book", expected=Expected(runner=runner), chapter_glob="09-*")
    code = next(e.code for c in book.chapters for e in c.exercises if e.number == "9.3")
    assert code is not None
    return code


def _variants(solution: str) -> dict[str, str]:
    assert solution.count(NOISE) == 1
    out = {what: solution.replace(NOISE, NOISE.replace("noise_key", key)) for what, key in ALTERNATIVES.items()}
    out["NumPy's generator seeded with the seed"] = solution.replace(
        "import jax\n", "import jax\nimport numpy as np\n", 1
    ).replace(NOISE, SEEDED_NUMPY)
    return out


@pytest.mark.slow
def test_9_3_accepts_any_independent_noise_and_still_fails_the_key_reuse(sandbox_image: str) -> None:
    code = _make_data(sandbox_image)
    variants = _variants(code.solution)
    sources = [code.starter, *variants.values()]
    runners = [DockerRunner(sandbox_image, owner="randomness-tests") for _ in range(2)]

    def run(index: int) -> Verdict:
        result = runners[index % 2].run(code_job(code, sources[index]), limits_for(code, slot=index % 2))
        return judge(result, code_cases(code), code.entry)

    with ThreadPoolExecutor(max_workers=2) as pool:
        bug, *alternatives = pool.map(run, range(len(sources)))

    for what, verdict in zip(variants, alternatives, strict=True):
        assert verdict.passed, (what, verdict.message, [c for c in verdict.cases if not c.passed])

    probes = [c for c in code.cases if c.probe]
    assert len(probes) >= 4
    failing = [c for c in bug.cases if not c.passed]
    assert [c.id for c in failing] == [c.id for c in probes], bug.message
    for case in failing:
        assert "Found: the noise (y - w_true * X - b_true) / noise_scale equals X" in case.message, case.message
        assert '"noise_is_not_a_copy_of_X": false' in case.got
    # On a few thousand points the statistics say what the bug does to the fit.
    big = next(c for c in failing if c.id == "noise_statistics_4096_points")
    assert "its correlation with X is 1.000; the least-squares slope is 3.1000" in big.message
