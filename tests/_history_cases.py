"""Small random histories for the whole-history engines (podium.history), in Podium's
arrays and in the shapes the oracle packages take."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from podium import Contest, Rater
from podium.history import ContestHistory, history_from_arrays, history_from_contests


@dataclass
class Case:
    """A random history and its oracle spellings."""

    history: ContestHistory
    #: per game, its teams' member names (best team first)
    composition: list[list[list[str]]]
    #: per game, each team's result (higher is better; equal results draw)
    results: list[list[float]]
    #: per game, each member's weight
    weights: list[list[list[float]]]
    times: list[float]


def random_case(seed: int, n_games: int, n_players: int, *, max_teams: int = 2,
                max_size: int = 1, draws: bool = False, weights: bool = False,
                span: int | None = None) -> Case:
    """``n_games`` games among ``n_players``: 2..``max_teams`` teams of
    1..``max_size`` members, listed best first; ties when ``draws``; member weights in
    [0.3, 1] when ``weights``; integer days drawn from ``0..span`` (several games may
    share a day)."""
    rng = np.random.default_rng(seed)
    span = span if span is not None else 3 * n_games
    days = np.sort(rng.integers(0, span + 1, size=n_games)).astype(float)
    ct, tr = [0], [0]
    place: list[int] = []
    player: list[int] = []
    weight: list[float] = []
    comp, res, pw = [], [], []
    for _ in range(n_games):
        nt = int(rng.integers(2, max_teams + 1))
        sizes = rng.integers(1, max_size + 1, size=nt)
        members = rng.choice(n_players, size=int(sizes.sum()), replace=False)
        if draws:
            key = np.sort(rng.integers(0, nt, size=nt))
            lo = np.searchsorted(key, key, side="left")
        else:
            lo = np.arange(nt)
        k = 0
        c_teams, c_w = [], []
        for t in range(nt):
            mem = members[k:k + sizes[t]]
            k += int(sizes[t])
            w = rng.uniform(0.3, 1.0, size=mem.size) if weights else np.ones(mem.size)
            player.extend(mem.tolist())
            weight.extend(w.tolist())
            tr.append(tr[-1] + mem.size)
            c_teams.append([str(m) for m in mem])
            c_w.append([float(x) for x in w])
        place.extend(int(x) for x in lo)
        ct.append(ct[-1] + nt)
        comp.append(c_teams)
        res.append([float(-x) for x in lo])
        pw.append(c_w)
    h = history_from_arrays(ct, tr, place, player, days, weight, n_players)
    return Case(h, comp, res, pw, [float(d) for d in days])


def mmr_rows(contests: Sequence[Contest], **params: Any
             ) -> tuple[ContestHistory, np.ndarray, pd.DataFrame]:
    """The history of ``contests``; Podium's ``mmr`` (``params``; all-tied rounds
    skipped, as ``mmr-smooth`` skips them) over them: per event, its row in that history,
    and the events."""
    lab = history_from_contests(list(contests))
    h = lab.history
    rater = Rater("mmr", all_tied="skip", **params)
    rater.extend(contests)
    ev = rater.events_frame()
    rc = h.row_contest
    key = {(int(lab.contest_index[rc[q]]), lab.handles[h.player[q]]): q
           for q in range(h.n_rows)}
    rows = np.array([key[(c, hd)] for c, hd in zip(ev.contest_index, ev.handle, strict=True)])
    return h, rows, ev


def team_contests(seed: int, n_players: int = 120, n_rounds: int = 25, *,
                  large: tuple[int, ...] = (), max_teams: int = 5, max_size: int = 3,
                  weights: bool = True, ties: bool = True, start: int = 0
                  ) -> list[Contest]:
    """Random team rounds, one a day: 2..``max_teams`` teams (30 in the rounds
    ``large``: more tie groups than the direct solve) of 1..``max_size`` members, ties
    between teams when ``ties`` (an all-tied round now and then), member weights in
    [0.3, 1] for about a third of the members when ``weights``; ``start``: the first
    round's time (seconds)."""
    rng = np.random.default_rng(seed)
    out = []
    for r in range(n_rounds):
        nt = 30 if r in large else int(rng.integers(2, max_teams + 1))
        sizes = rng.integers(1, max_size + 1, nt)
        members = rng.choice(n_players, int(sizes.sum()), replace=False)
        if ties and r not in large:
            key = np.sort(rng.integers(0, max(nt - 1, 2), nt))
        else:
            key = np.arange(nt)
        lo = np.searchsorted(key, key, side="left")
        hi = np.searchsorted(key, key, side="right") - 1
        rows, k = [], 0
        for t in range(nt):
            mem = []
            for m in members[k:k + sizes[t]]:
                w = float(rng.uniform(0.3, 1.0)) if weights and rng.random() < 0.3 else 1.0
                mem.append((f"p{m}", w))
            k += int(sizes[t])
            rows.append((f"t{r}.{t}", int(lo[t]), int(hi[t]), mem))
        out.append(Contest.from_teams(rows, name=f"round {r}", time_seconds=start + r * 86400))
    return out
