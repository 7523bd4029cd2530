"""The GPU training driver's plan: both models of a pair train for the same number of steps."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import gpu_train  # noqa: E402


def test_a_pair_agrees_on_one_step_count(tmp_path):
    a = argparse.Namespace(deadline=time.time() + 100, fill=0.97)
    steps: dict[str, int] = {}

    def plan(name: str, rate: float, delay: float) -> None:
        time.sleep(delay)
        steps[name] = gpu_train._pair_plan(name, rate, tmp_path, a)

    threads = [threading.Thread(target=plan, args=x) for x in
               [("gpt-wide", 15.0, 0.0), ("lstm-wide", 12.0, 0.3), ("gpt-large", 10.0, 0.2), ("lstm-large", 11.0, 0.0)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert steps["gpt-wide"] == steps["lstm-wide"] != steps["gpt-large"] == steps["lstm-large"]
    # the slower model of each pair sets the pace: about 12 and 10 steps a second for ~100 s
    assert 1000 < steps["gpt-wide"] <= 130 + 12 * 100 and 850 < steps["gpt-large"] <= 130 + 10 * 100


def test_a_model_whose_partner_never_reports_plans_alone(tmp_path):
    a = argparse.Namespace(deadline=time.time() + 50, fill=1.0)
    assert 130 + 4 * 49 <= gpu_train._pair_plan("gpt-wide", 4.0, tmp_path, a, wait=0.2) <= 130 + 4 * 50
