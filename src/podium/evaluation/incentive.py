"""The volatility-farming experiment of the Elo-MMR paper's code ([EbtekarLiu2021], Sec. 5).

A strong player deliberately finishes last whenever their rating exceeds a
threshold during a window of contests, then plays honestly again.  Under the
TopCoder system each loss raises the player's volatility, and the honest
results that follow then lift the rating *above* what honest play gives: the
system rewards the manipulation.  Elo-MMR's Theorem 5.5 (aligned incentives)
says a player's rating can only be hurt by performing worse, so the farmed
rating should never end above the honest one there.

The manipulated history is built once: contest by contest, a rater of the
deciding system (``decide_by``, TopCoder by default, as the issue asks) follows
the *manipulated* history and decides whether the player is moved to last
place.  Every compared system then rates both the honest and the manipulated
history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from podium.core.contest import Contest
from podium.errors import ConfigError
from podium.rater import Rater

__all__ = ["IncentiveResult", "move_to_last", "plot_incentive", "volatility_farming"]


def move_to_last(contest: Contest, handle: str) -> Contest:
    """``contest`` with ``handle`` alone in last place (everybody else keeps their order
    and ties)."""
    try:
        i = contest.handles.index(handle)
    except ValueError:
        raise ConfigError(f"{handle!r} is not in contest {contest.label!r}") from None
    keep = [k for k in range(len(contest)) if k != i]
    handles = [contest.handles[k] for k in keep] + [handle]
    places = np.concatenate([contest.lo[keep] + 1, [len(contest) + 1]])
    return Contest.from_places(
        handles, places, name=contest.name, time_seconds=contest.time_seconds,
        weight=contest.weight, perf_ceiling=contest.perf_ceiling, url=contest.url,
    )


@dataclass(frozen=True)
class IncentiveResult:
    """Outcome of :func:`volatility_farming`.

    Attributes
    ----------
    manipulated:
        Indices of the contests where the player was moved to last place.
    trajectories:
        Columns ``system, history ("honest"|"farming"), contest_index, display_rating,
        mu``: the player's rating after each of their contests.
    summary:
        One row per system: final and peak (after the window) display ratings under
        both histories and ``gain_final`` = farming − honest at the end.
    """

    handle: str
    decide_by: str
    threshold: float
    window: tuple[int, int]
    contests: int
    manipulated: tuple[int, ...]
    trajectories: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)


def volatility_farming(
    contests: Sequence[Contest],
    handle: str,
    *,
    systems: Sequence[str] = ("tcsys", "mmr"),
    decide_by: str = "tcsys",
    threshold: float = 3000.0,
    window: tuple[int, int] | None = None,
) -> IncentiveResult:
    """Replay ``contests`` honestly and with ``handle`` farming volatility.

    Parameters
    ----------
    contests:
        The history (the paper's code used the first 400 Codeforces contests).
    handle:
        The manipulating player (the paper's code: ``tourist``).
    systems:
        Systems whose reaction is compared.
    decide_by:
        System whose current rating (mu) of ``handle`` decides the manipulation.
    threshold:
        The player loses on purpose while that rating exceeds this.
    window:
        ``(start, end)``: the player may lose on purpose in contests with
        ``start < index < end``; default the paper code's ``(n/4, 3n/4)``.
    """
    n = len(contests)
    if window is None:
        window = (n // 4, 3 * n // 4)
    start, end = window
    if not 0 <= start < end <= n:
        raise ConfigError(f"window must satisfy 0 <= start < end <= {n}, got {window}")
    if not any(handle in c.handles for c in contests):
        raise ConfigError(f"player {handle!r} takes part in none of the {n} contests")

    decider = Rater(decide_by)
    farmed: list[Contest] = []
    manipulated: list[int] = []
    for t, c in enumerate(contests):
        if start < t < end and handle in decider.players.index and handle in c.handles:
            mu, _ = decider.rating(handle)
            if mu > threshold:
                c = move_to_last(c, handle)
                manipulated.append(t)
        decider.add(c)
        farmed.append(c)

    frames = []
    rows = []
    for name in systems:
        finals: dict[str, float] = {}
        peaks: dict[str, float] = {}
        for label, history in (("honest", contests), ("farming", farmed)):
            rater = Rater(name)
            rater.extend(history)
            h = rater.history(handle)
            frames.append(pd.DataFrame({
                "system": name, "history": label, "contest_index": h["contest_index"],
                "display_rating": h["display_rating"], "mu": h["mu"],
            }))
            finals[label] = float(h["display_rating"].iloc[-1])
            after = h.loc[h["contest_index"] >= end, "display_rating"]
            peaks[label] = float(after.max()) if len(after) else float("nan")
        rows.append({
            "system": name,
            "honest_final": finals["honest"], "farming_final": finals["farming"],
            "honest_peak_after": peaks["honest"], "farming_peak_after": peaks["farming"],
            "gain_final": finals["farming"] - finals["honest"],
            "gain_peak_after": peaks["farming"] - peaks["honest"],
        })
    return IncentiveResult(
        handle=handle, decide_by=decide_by, threshold=threshold, window=(start, end),
        contests=n, manipulated=tuple(manipulated),
        trajectories=pd.concat(frames, ignore_index=True), summary=pd.DataFrame(rows),
    )


def plot_incentive(result: IncentiveResult, path: str | Path) -> Path:
    """One panel per system: the player's honest and farming trajectories."""
    from podium.evaluation.plots import pyplot, save_figure

    plt = pyplot()
    systems = list(dict.fromkeys(result.trajectories["system"]))
    fig, axes = plt.subplots(len(systems), 1, figsize=(9, 3.4 * len(systems)), squeeze=False)
    for ax, name in zip(axes[:, 0], systems, strict=True):
        df = result.trajectories[result.trajectories["system"] == name]
        for label, style in (("honest", "-"), ("farming", "--")):
            d = df[df["history"] == label]
            ax.plot(d["contest_index"], d["display_rating"], style, marker=".", markersize=3,
                    linewidth=1.2, label=label)
        ax.axvspan(result.window[0], result.window[1], color="grey", alpha=0.12,
                   label="farming window")
        for t in result.manipulated:
            ax.axvline(t, color="red", alpha=0.15, linewidth=0.8)
        ax.set_title(f"{name}: {result.handle} (placed last {len(result.manipulated)} times)")
        ax.set_ylabel("display rating")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[-1, 0].set_xlabel("contest index")
    return save_figure(fig, path)
