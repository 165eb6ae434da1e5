"""Speed of :mod:`podium.evaluation.metrics` on a Codeforces-sized round, and the accuracy of its
panel evaluation of seed 003's expected ranks against the exact all-pairs sum.

    python benchmarks/bench_metrics.py                 # n = 18,743 (largest CF round)
    python benchmarks/bench_metrics.py -n 5000 --repeat 20
    python benchmarks/bench_metrics.py --exact         # also time the O(n^2) sum

The round is synthetic but realistic: ratings N(1500, 350) rounded to integers
(ties in rating, as integer-rated systems give), places distinct except for tie
blocks of 2-40 players covering ~15% of the field, and a history length per
player (a third of them debutants or with fewer than 5 earlier contests).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from podium.evaluation import _metrics_kernels as k
from podium.evaluation.metrics import MetricAccumulator, rank_log_errors


def make_round(n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``(mu, lo, hi, n_prev)`` of one synthetic round in standings order."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(1500.0, 350.0, n)
    perf = skill + rng.normal(0.0, 200.0, n)
    order = np.argsort(-perf)
    mu = np.round(skill[order])
    lo = np.arange(n)
    hi = np.arange(n)
    pos = 0
    while pos < n:
        if rng.random() < 0.01:
            size = min(int(rng.integers(2, 41)), n - pos)
            lo[pos:pos + size] = pos
            hi[pos:pos + size] = pos + size - 1
            pos += size
        else:
            pos += 1
    n_prev = rng.choice([0, 1, 2, 3, 4, 5, 8, 20, 60], size=n)
    return mu, lo, hi, n_prev


def best_of(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=18_743)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--exact", action="store_true", help="time the exact O(n^2) sum too")
    args = ap.parse_args()
    mu, lo, hi, n_prev = make_round(args.n)
    c = math.log(10.0) / 400.0

    t0 = time.perf_counter()
    MetricAccumulator().add_round(mu, lo, hi, n_prev)  # compile or load the kernels
    print(f"first call (JIT compile/cache load): {time.perf_counter() - t0:.2f} s")

    fast = MetricAccumulator(extended=False)
    full = MetricAccumulator()
    t_fast = best_of(lambda: fast.add_round(mu, lo, hi, n_prev), args.repeat)
    t_full = best_of(lambda: full.add_round(mu, lo, hi, n_prev), args.repeat)
    t_l = best_of(lambda: rank_log_errors(mu, lo, hi), args.repeat)
    print(f"n = {args.n}: add_round extended=False {t_fast * 1e3:.2f} ms, "
          f"extended=True {t_full * 1e3:.2f} ms (of which rank_log_errors {t_l * 1e3:.2f} ms)")

    panels = k.logistic_sums(mu, mu, c, k.METHOD_CHEB)
    k.logistic_sums_direct(mu[:10], mu[:10], c)
    t0 = time.perf_counter()
    exact = k.logistic_sums_direct(mu, mu, c)
    t_exact = time.perf_counter() - t0
    rel = np.max(np.abs(panels - exact) / exact)
    print(f"panel sums vs exact O(n^2) sums: max relative difference {rel:.2e}")
    e_fast = k.rank_log_errors_kernel(mu, lo, c, k.METHOD_AUTO)
    e_exact = k.rank_log_errors_kernel(mu, lo, c, k.METHOD_DIRECT)
    print(f"rank_log_errors: max |e_panel - e_exact| {np.max(np.abs(e_fast - e_exact)):.2e}")
    if args.exact:
        t_exact = best_of(lambda: k.logistic_sums_direct(mu, mu, c), 3)
    print(f"exact O(n^2) logistic sums (parallel, fastmath off): {t_exact:.3f} s")


if __name__ == "__main__":
    main()
