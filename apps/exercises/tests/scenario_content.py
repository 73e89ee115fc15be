"""A small workbook whose chapter shares a scenario, written as an author writes one (YAML files),
for the tests of scenarios, references, rounds and the consistency checks.

Chapter 1 ("A fleet"): scenario ``fleet`` draws the traffic (requests per second, output tokens)
and the replica's throughput once per learner and round. 1.1 sizes the fleet; 1.2 bills it and
refers to 1.1's answer; 1.3 asks the tokens per hour of the same traffic, and draws a given of
its own. 1.4 does not take part.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SLUG = "fleet-book"

CHAPTER: dict[str, Any] = {
    "number": 1,
    "title": "A fleet",
    "scenarios": {
        "fleet": {
            "givens": {"rps": 400, "out_len": 250, "tps": 1500},
            "derived": {"demand": "rps * out_len", "gpus": "ceil(demand / tps)"},
            "vary": {
                "givens": {
                    "rps": {"range": [200, 1200], "step": 25},
                    "out_len": {"values": [150, 200, 250, 300, 350, 400]},
                    "tps": {"values": [1200, 1500, 1800, 2400]},
                },
                # the fleet has at least ten GPUs (the prompt speaks of a fleet)
                "require": ["demand >= 10 * tps"],
            },
        }
    },
    "exercises": [
        {
            "number": "1.1",
            "id": "fleet-size",
            "title": "Size the fleet",
            "kind": "derive",
            "format": "numeric",
            "scenario": "fleet",
            "prompt": "Traffic is {{rps}} requests per second of {{out_len}} output tokens each. One GPU "
            "serves {{tps | ,}} tokens per second. How many GPUs does the fleet need?",
            "answer": {"value": "gpus", "unit": "", "input_unit": "", "tolerance": 0},
            "explanation": "{{demand | ,}} tokens/s over {{tps | ,}} per GPU, rounded up: **{{gpus}}**.",
        },
        {
            "number": "1.2",
            "id": "fleet-bill",
            "title": "Bill the fleet",
            "kind": "derive",
            "format": "numeric",
            "scenario": "fleet",
            "givens": {"price": 3.0, "hours": 720},
            # the traffic is 1.1's: shown there, and here through 1.1's answer once 1.1 is solved
            "implicit": ["rps", "out_len", "tps"],
            "vary": {"givens": {"price": {"range": [2.0, 4.0], "step": 0.25}}},
            "prompt": "Rent {% ref fleet-size %}the fleet of 1.1, {{gpus}} GPUs,{% else %}the fleet you size "
            "in 1.1 (solve it first: its size shows here then){% end %} at \\${{price | .2f}} per GPU-hour "
            "for a {{hours}}-hour month. What is the monthly bill in dollars?",
            "answer": {"value": "gpus * price * hours", "unit": "$", "input_unit": "$", "sig_figs": 3},
            "explanation": "{{gpus}} × \\${{price | .2f}} × {{hours}} h = **\\${{answer | ,.0f}}**.",
        },
        {
            "number": "1.3",
            "id": "fleet-tokens",
            "title": "Tokens per hour",
            "kind": "derive",
            "format": "numeric",
            "scenario": "fleet",
            "givens": {"share": 0.5},
            "implicit": ["tps"],  # the scenario's, unused here
            "vary": {"givens": {"share": {"values": [0.3, 0.4, 0.5, 0.6, 0.7]}}},
            "prompt": "Of the traffic of 1.1 ({{rps}} requests per second of {{out_len}} tokens), a share "
            "of {{share | pct}} goes to the large model. How many million tokens per hour does it produce?",
            "answer": {"value": "demand * share * 3600 / 1e6", "unit": "", "input_unit": "", "sig_figs": 3},
            "explanation": "{{demand | ,}} × {{share}} × 3600 = **{{answer | sig3}} M**.",
        },
        {
            "number": "1.4",
            "id": "alone",
            "title": "On its own",
            "kind": "derive",
            "format": "numeric",
            "givens": {"a": 12, "b": 7},
            "vary": {"givens": {"a": {"range": [11, 60], "step": 1}}},
            "prompt": "A layer has {{a}} rows of {{b}} weights. How many parameters?",
            "answer": {"value": "a * b", "unit": "params"},
            "explanation": "{{a}} × {{b}} = **{{answer}}**.",
        },
    ],
}


def write(root: Path, chapter: dict[str, object] | None = None) -> Path:
    """The workbook's folder under ``root`` (its one chapter: ``chapter``, default CHAPTER)."""
    folder = root / SLUG
    (folder / "chapters").mkdir(parents=True, exist_ok=True)
    (folder / "workbook.yaml").write_text(
        yaml.safe_dump({"slug": SLUG, "title": "Fleet book", "summary": "A scenario shared by three exercises."})
    )
    (folder / "chapters" / "01-fleet.yaml").write_text(yaml.safe_dump(chapter or CHAPTER, sort_keys=False))
    return folder
