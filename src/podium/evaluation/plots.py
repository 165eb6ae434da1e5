"""Figures for evaluations (matplotlib, written to files, no display needed).

* :func:`plot_metric_over_time`: a metric per contest (rolling mean) for each system;
* :func:`plot_trajectories`: chosen players' display ratings contest by contest;
* :func:`plot_rating_distribution`: histogram of the final display ratings;
* :func:`plot_reliability`: the reliability diagram of the outcome probabilities
  (:mod:`podium.evaluation.calibration`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from podium.errors import PodiumError
from podium.evaluation.runner import EvalResult
from podium.rater import Rater

__all__ = [
    "plot_metric_over_time",
    "plot_rating_distribution",
    "plot_reliability",
    "plot_trajectories",
    "pyplot",
    "save_figure",
    "write_plots",
]


def pyplot():  # type: ignore[no-untyped-def]
    """``matplotlib.pyplot`` on the file-only Agg backend (a clear error without matplotlib)."""
    try:
        import matplotlib
    except ImportError:
        raise PodiumError(
            "plots need matplotlib: pip install 'podium[eval]' (or pip install matplotlib)"
        ) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: str | Path) -> Path:  # type: ignore[no-untyped-def]
    """Lay out, save (110 dpi PNG) and close ``fig``."""
    plt = pyplot()
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_metric_over_time(
    results: Sequence[EvalResult], path: str | Path, *, metric: str = "pair_inv",
    window: int = 25,
) -> Path:
    """Rolling mean (over ``window`` contests) of ``metric`` per scored contest."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for res in results:
        df = res.per_round
        if metric not in df.columns or df.empty:
            continue
        s = df[metric].astype(float)
        roll = s.rolling(window, min_periods=1).mean()
        ax.plot(df["index"], roll, label=f"{res.system} (mean {res.metrics[metric]:.2f})",
                linewidth=1.2)
    ax.set_xlabel("contest index")
    ax.set_ylabel(f"{metric} (rolling mean of {window} contests)")
    ax.set_title(f"{metric} per contest, ratings before the contest")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def plot_trajectories(
    raters: dict[str, Rater], handles: Sequence[str], path: str | Path
) -> Path:
    """Display rating after each contest of every handle, one panel per system."""
    plt = pyplot()
    if not raters:
        raise PodiumError("no rating runs to plot")
    fig, axes = plt.subplots(len(raters), 1, figsize=(9, 3.2 * len(raters)), squeeze=False)
    for ax, (name, rater) in zip(axes[:, 0], raters.items(), strict=True):
        drawn = 0
        for h in handles:
            if h not in rater.players.index:
                continue
            hist = rater.history(h)
            ax.plot(hist["contest_index"], hist["display_rating"], marker=".", markersize=3,
                    linewidth=1, label=h)
            drawn += 1
        ax.set_title(name)
        ax.set_ylabel("display rating")
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
    axes[-1, 0].set_xlabel("contest index")
    return save_figure(fig, path)


def plot_rating_distribution(
    raters: dict[str, Rater], path: str | Path, *, min_contests: int = 1
) -> Path:
    """Histogram of final display ratings (players with ``min_contests``+ contests)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for name, rater in raters.items():
        df = rater.ratings(sort=False)
        vals = df.loc[df["contests"] >= min_contests, "display_rating"].to_numpy()
        vals = vals[np.isfinite(vals)]
        if vals.size:
            ax.hist(vals, bins=80, histtype="step", label=f"{name} ({vals.size:,} players)")
    ax.set_xlabel("display rating")
    ax.set_ylabel("players")
    ax.set_title(f"final rating distribution (players with {min_contests}+ contests)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def plot_reliability(results: Sequence[EvalResult], path: str | Path) -> Path:
    """Reliability diagram: per bin of predicted probability (10 equal-width bins), the
    observed frequency against the mean prediction, for P(first) (every side of every
    contest) and for the pairwise outcomes (each pair's favourite), one line per
    system; a calibrated system follows the diagonal.  The expected calibration error
    is in the legend."""
    from podium.evaluation.calibration import expected_calibration_error, reliability

    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), squeeze=False)
    titles = {"first": "P(first): every side of every contest",
              "pair": "pairwise: P(favourite ahead)"}
    for ax, what in zip(axes[0], ("first", "pair"), strict=True):
        ax.plot([0, 1], [0, 1], color="0.6", linewidth=1, linestyle="--")
        for res in results:
            if res.calibration is None:
                continue
            p, y = res.calibration.predictions(what)
            if not p.size:
                continue
            mean_p, mean_y, count = reliability(p, y)
            full = count > 0
            ece = expected_calibration_error(p, y)
            ax.plot(mean_p[full], mean_y[full], marker="o", markersize=4, linewidth=1.2,
                    label=f"{res.system} (ECE {ece:.4f}, {p.size:,} predictions)")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("predicted probability (bin mean)")
        ax.set_ylabel("observed frequency")
        ax.set_title(titles[what])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def write_plots(
    results: Sequence[EvalResult], directory: str | Path, *, handles: Sequence[str] = ()
) -> list[Path]:
    """All figures of an evaluation into ``directory``; returns the files written.

    ``handles`` defaults to the three best-rated players of the first system."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = [plot_metric_over_time(results, d / "metric_pair_inv.png"),
               plot_metric_over_time(results, d / "metric_rank_dev.png", metric="rank_dev")]
    raters = {r.system: r.rater for r in results if r.rater is not None}
    if raters:
        if not handles:
            first = next(iter(raters.values()))
            handles = first.ratings().query("contests >= 5")["handle"].head(3).tolist()
        written.append(plot_trajectories(raters, handles, d / "trajectories.png"))
        written.append(plot_rating_distribution(raters, d / "rating_distribution.png"))
    if any(r.calibration is not None and r.calibration.records for r in results):
        written.append(plot_reliability(results, d / "reliability.png"))
    return written
