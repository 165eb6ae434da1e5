"""Why ``mmr-smooth`` needs more sweeps on team histories (issue 29; docs/history.md,
"Team rounds"): the slow directions of its sweep map, and the sweeps to ``--tol`` of
candidate corrections, on the seeded synthetic team league
(``synthetic_team_contests``, partial play 0.2, as ``bench_history.py --section teams``).

Two parts (``--part``):

* ``spectrum``: the sweep map ``G`` (phase 2 of every player, then phase 1 of every
  round) linearised at the fixed point (finite differences of 0.5 rating points),
  its largest eigenvalues by Arnoldi (``--arnoldi`` steps from a random start), and
  what each eigenvector ``v`` is made of: the share of ``w v`` (``w`` the member's
  weight: a team-level quantity) that is one value for the whole history, one per
  contest and one per team of a round; the share of ``v`` that is one value per player;
  and how ``v``'s team part is spread over the team sizes.
* ``sweeps``: the sweeps and seconds of :meth:`SmoothState.solve` from the first pass,
  with Anderson's memory 10 (the default) and with corrections of ``G(x)`` before
  Anderson's step (every one keeps the fixed point: it vanishes with ``G(x) - x``):

  - ``memory20``: 20 differences;
  - ``team-damp``: each team's surprise ``P_T - mu_T`` (the part of ``f = G(x) - x``
    along ``1 / w_i`` over the team's members), less its round's mean, damped by
    ``--damp``;
  - ``global``: the shift of every performance extrapolated by a gain ``--gain``
    (``G + gain / (1 - gain)`` times the mean of ``f``), as a coarse correction with
    one unknown would.

Timings are one process, one after the other: ratios under the same load (``uptime``
is printed).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import load_average  # noqa: E402

import podium.history.smooth_state as smooth_state  # noqa: E402
from podium.history import SmoothState, history_from_contests  # noqa: E402
from podium.history.anderson import Anderson  # noqa: E402
from podium.history.sweeps import SWEEP_PANELS  # noqa: E402
from podium.io.synthetic_teams import synthetic_team_contests  # noqa: E402

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Correction = Callable[[FloatArray, FloatArray], FloatArray]


class _Corrected(Anderson):
    """Anderson's step on ``correct(x, G(x))`` in place of ``G(x)``."""

    def __init__(self, m: int, correct: Correction) -> None:
        super().__init__(m)
        self.correct = correct

    def step(self, x: FloatArray, g: FloatArray) -> FloatArray:
        return super().step(x, self.correct(x, g))


def _league(args: argparse.Namespace) -> SmoothState:
    """The league's state after the first pass."""
    league = synthetic_team_contests(args.players, args.rounds, partial_prob=0.2,
                                     max_size=args.max_size, seed=args.seed)
    st = SmoothState.start(history_from_contests(league.contests).history)
    st.rate_forward(st.history.n_contests)
    return st


def _layout(st: SmoothState) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """Per row (contest order): its team (of the whole history), player and weight;
    per team, its contest."""
    h, r_end = st.history, st.rated_rows
    team = np.repeat(np.arange(h.team_rows.size - 1), np.diff(h.team_rows))[:r_end]
    contest_of_team = st.row_contest[h.team_rows[:-1][:int(team.max()) + 1]]
    return team, st.rounds.player[:r_end], st.teams.weight[:r_end], contest_of_team


def _mean_of(f: FloatArray, ids: IntArray, weights: FloatArray | None = None) -> FloatArray:
    """Per row, the (weighted) mean of ``f`` over the rows of its id."""
    wts = np.ones_like(f) if weights is None else weights
    return (np.bincount(ids, wts * f) / np.maximum(np.bincount(ids, wts), 1e-300))[ids]


def _team_damp(st: SmoothState, damp: float) -> Correction:
    team, _, w, contest_of_team = _layout(st)
    u = 1.0 / w
    uu = np.bincount(team, u * u)

    def correct(x: FloatArray, g: FloatArray) -> FloatArray:
        f = g - x
        c = np.bincount(team, f * u) / uu
        c = c - (np.bincount(contest_of_team, c * uu)
                 / np.bincount(contest_of_team, uu))[contest_of_team]
        return g - (1.0 - damp) * c[team] * u

    return correct


def _global(gain: float) -> Correction:
    def correct(x: FloatArray, g: FloatArray) -> FloatArray:
        return g + gain / (1.0 - gain) * float(np.mean(g - x))

    return correct


def part_sweeps(args: argparse.Namespace) -> None:
    variants: list[tuple[str, int, Callable[[SmoothState], Correction] | None]] = [
        ("main (memory 10)", 10, None),
        ("memory20", 20, None),
        (f"team-damp {args.damp:g}", 10, lambda st: _team_damp(st, args.damp)),
        (f"global {args.gain:g}", 10, lambda st: _global(args.gain)),
        (f"global {args.gain:g}, memory20", 20, lambda st: _global(args.gain)),
    ]
    for name, memory, make in variants:
        st = _league(args)
        if make is not None:
            correct = make(st)
            smooth_state.Anderson = lambda m, c=correct: _Corrected(m, c)  # type: ignore
        try:
            t0 = time.perf_counter()
            reports, converged = st.solve(args.tol, 300, memory)
            seconds = time.perf_counter() - t0
        finally:
            smooth_state.Anderson = Anderson  # type: ignore[misc]
        print(f"{name:32s} sweeps {len(reports):3d} converged {converged} {seconds:7.1f} s  "
              f"load {load_average()}", flush=True)


def part_spectrum(args: argparse.Namespace) -> None:
    st = _league(args)
    st.solve(args.reference_tol, 500)
    en, rd, r_end = st.entries, st.rounds, st.rated_rows
    e = st.e_of_row[:r_end]
    players = np.flatnonzero(en.n_rated >= 2)
    contests = np.arange(st.rated)

    def sweep(x: FloatArray) -> FloatArray:
        st._set_row_perf(x, e)
        st._phase2(players)
        st.phase1_newton(contests, 1e-10, SWEEP_PANELS)
        return rd.perf[:r_end].copy()

    x0 = rd.perf[:r_end].copy()
    g0 = sweep(x0)
    print(f"fixed point: largest residual {np.abs(g0 - x0).max():.2g}")
    step = 0.5
    m = args.arnoldi
    basis = np.zeros((m + 1, r_end))
    hess = np.zeros((m + 1, m))
    q = np.random.default_rng(0).standard_normal(r_end)
    basis[0] = q / np.linalg.norm(q)
    for j in range(m):
        v = (sweep(x0 + step * basis[j]) - g0) / step
        for _ in range(2):  # Gram-Schmidt, twice
            c = basis[:j + 1] @ v
            hess[:j + 1, j] += c
            v -= c @ basis[:j + 1]
        hess[j + 1, j] = np.linalg.norm(v)
        basis[j + 1] = v / hess[j + 1, j]
    theta, vecs = np.linalg.eig(hess[:m, :m])
    team, player, w, contest_of_team = _layout(st)
    size = np.bincount(team)
    u = 1.0 / w
    print("eigenvalue | shares of w v: global, per contest, per team | v per player "
          "| v's team part by team size 1..5")
    for k in np.argsort(-np.abs(theta))[:args.show]:
        v = np.real(basis[:m].T @ vecs[:, k])
        v /= np.linalg.norm(v)
        wv = w * v
        tot = float(wv @ wv)
        shares = [float(wv.mean() ** 2 * wv.size / tot)]
        for ids in (st.row_contest[:r_end], team):
            p = _mean_of(wv, ids)
            shares.append(float(p @ p / tot))
        pp = _mean_of(v, player)
        c = np.bincount(team, v * u) / np.bincount(team, u * u)
        energy = c * c * np.bincount(team, u * u)
        by_size = np.array([energy[size == s].sum() for s in range(1, 6)])
        print(f"{theta[k].real:+.3f} | " + " ".join(f"{s:.2f}" for s in shares)
              + f" | {float(pp @ pp):.2f} | "
              + " ".join(f"{b:.2f}" for b in by_size / max(by_size.sum(), 1e-300)))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=["spectrum", "sweeps"], action="append")
    ap.add_argument("--players", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--max-size", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--reference-tol", type=float, default=1e-5)
    ap.add_argument("--arnoldi", type=int, default=40)
    ap.add_argument("--show", type=int, default=12)
    ap.add_argument("--damp", type=float, default=0.8)
    ap.add_argument("--gain", type=float, default=0.98)
    args = ap.parse_args(argv)
    print(f"league: {args.players} players, {args.rounds} rounds of 20 teams of 1-"
          f"{args.max_size}, seed {args.seed}; {os.uname().nodename}, load "
          f"{load_average()}", flush=True)
    parts: dict[str, Callable[[argparse.Namespace], Any]] = {
        "spectrum": part_spectrum, "sweeps": part_sweeps}
    for name in args.part or ["spectrum", "sweeps"]:
        parts[name](args)


if __name__ == "__main__":
    main()
