"""The simulation of [CuffedElo] ("Results"): five players, random games, Spearman's rank
correlation of each system's ratings with the true strengths, averaged over 400 repetitions.

The seed says only: "I generated five players with varying strengths and randomly produced a
series of games ... calculated the Spearman's rank correlation coefficient for each set of
ratings vs. the true relative strengths ... repeated this process 400 times".  Where it is
silent, :class:`SimulationSetup` chooses (documented in ``docs/pairwise.md``):

* strengths: i.i.d. normal, mean 1200, standard deviation ``strength_sd`` (200) Elo points;
* games: ``games`` (10) games, each between a pair of distinct players drawn uniformly
  (with replacement: a pair may meet several times, another never);
* outcomes: the first player wins with Elo's probability of the *true* strengths,
  ``1 / (1 + 10**((s_j - s_i) / 400))``; no draws;
* systems: SingleElo with the seed's update (K = 1) from 1200 in the order the games were
  drawn; the system of equations with the Haldane-Anscombe pseudo-count 1/2; PageRank
  (damping 0.85) of the loser -> winner graph; Glicko with all games in one rating period
  from 1500/350; SampleElo over 100 random orderings and exact AverageElo (K = 1);
* Spearman's coefficient from :func:`scipy.stats.spearmanr` (ties get average ranks); a
  constant rating vector (no information) counts as 0.

Run it with ``python benchmarks/pairwise_simulation.py``.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import spearmanr

from podium.systems.pairwise import (
    elo_average,
    elo_lsq,
    elo_sample,
    elo_single,
    glicko,
    pagerank,
)

__all__ = [
    "SimulationSetup", "SEED_RESULTS", "SYSTEM_NAMES", "simulate", "simulate_samples", "spearman",
]

#: The seed's table (average Spearman coefficient over 400 repetitions).
SEED_RESULTS: dict[str, float] = {
    "Standard Elo": 0.1685,
    "System of Equations": 0.60275,
    "PageRank": 0.47125,
    "Glicko": 0.59425,
}

#: Every system the simulation rates, in the order of the report.
SYSTEM_NAMES: tuple[str, ...] = (
    "Standard Elo", "System of Equations", "PageRank", "Glicko", "SampleElo", "AverageElo",
)


@dataclass(frozen=True)
class SimulationSetup:
    """What the seed leaves open (see the module docstring)."""

    players: int = 5
    games: int = 10
    repetitions: int = 400
    strength_sd: float = 200.0
    k: float = 1.0
    sample_orderings: int = 100
    average_exact: bool = True
    seed: int = 4

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def spearman(ratings: npt.ArrayLike, truth: npt.ArrayLike) -> float:
    """Spearman's rank correlation; 0 when ``ratings`` are all equal (no ranking)."""
    x = np.asarray(ratings, dtype=np.float64)
    if x.size < 2 or np.all(x == x[0]):
        return 0.0
    return float(spearmanr(x, truth).statistic)


def simulate(setup: SimulationSetup | None = None) -> dict[str, float]:
    """Average Spearman coefficient of every system over ``setup.repetitions`` histories.

    Returns ``{system name: mean coefficient}`` in the order of :data:`SYSTEM_NAMES`
    (``AverageElo`` only when ``setup.average_exact``).
    """
    return {name: float(v.mean()) for name, v in simulate_samples(setup).items()}


def simulate_samples(setup: SimulationSetup | None = None) -> dict[str, npt.NDArray[np.float64]]:
    """As :func:`simulate`, but every repetition's coefficient (for standard errors)."""
    s = setup or SimulationSetup()
    if s.players < 2 or s.games < 1 or s.repetitions < 1:
        raise ValueError("need at least 2 players, 1 game and 1 repetition")
    rng = np.random.default_rng(s.seed)
    pairs = np.array(list(itertools.combinations(range(s.players), 2)), dtype=np.int64)
    names = [n for n in SYSTEM_NAMES if n != "AverageElo" or s.average_exact]
    coef = {name: np.empty(s.repetitions) for name in names}
    n = s.players
    for rep in range(s.repetitions):
        strength = 1200.0 + s.strength_sd * rng.standard_normal(n)
        games = pairs[rng.integers(0, pairs.shape[0], s.games)]
        p_first = 1.0 / (1.0 + 10.0 ** ((strength[games[:, 1]] - strength[games[:, 0]]) / 400.0))
        outcomes = (rng.random(s.games) < p_first).astype(np.float64)
        ratings = {
            "Standard Elo": elo_single(games, n, outcomes=outcomes, k=s.k),
            "System of Equations": elo_lsq(games, n, outcomes=outcomes),
            "PageRank": pagerank(games, n, outcomes=outcomes),
            "Glicko": glicko(games, n, outcomes=outcomes)[0],
            "SampleElo": elo_sample(games, n, outcomes=outcomes, k=s.k,
                                    samples=s.sample_orderings, seed=rng),
        }
        if s.average_exact:
            ratings["AverageElo"] = elo_average(games, n, outcomes=outcomes, k=s.k)
        for name in names:
            coef[name][rep] = spearman(ratings[name], strength)
    return coef
