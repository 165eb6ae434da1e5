"""Pairwise games ([CuffedElo]): SingleElo, AverageElo, SampleElo, the least-squares
"system of equations", PageRank and classic two-player Glicko.

Two layers, one module each:

* :mod:`podium.systems.pairwise.functional`: a **functional API** on plain arrays
  (choix-style): every function takes a list/array of games ``(i, j)`` -- by default
  "``i`` beat ``j``" -- with optional ``outcomes`` and returns a ratings array indexed
  by player::

      >>> from podium.systems.pairwise import elo_single, elo_lsq
      >>> games = [(0, 1), (0, 1), (1, 0), (1, 2)]
      >>> elo_single(games, k=32).round(2)
      array([1211.75, 1204.79, 1183.46])
      >>> elo_lsq(games).round(2)
      array([1200.  , 1111.26,  920.41])

* :mod:`podium.systems.pairwise.systems`: the six
  :class:`~podium.systems.base.RatingSystem` wrappers for multiplayer contests
  (``elo-single``, ``elo-average``, ``elo-sample``, ``elo-lsq``, ``pagerank``,
  ``glicko2p``), declared in :data:`SPEC`; a contest is fed as all pairs.

Every public name of both is importable from here; ``kernels.py`` holds their Numba
loops and ``explain.py`` their explanations.
"""

from __future__ import annotations

from podium.systems.base import Preset, SystemSpec
from podium.systems.pairwise.functional import (
    DEFAULT_MAX_ORDERINGS,
    DEFAULT_MAX_PAIRS,
    GLICKO_Q,
    count_orderings,
    elo_average,
    elo_expected,
    elo_lsq,
    elo_sample,
    elo_single,
    glicko,
    glicko_g,
    pagerank,
    pair_table,
    round_games,
)
from podium.systems.pairwise.systems import (
    AverageElo,
    CounterState,
    Glicko2p,
    GlickoState,
    LeastSquaresElo,
    PageRankSystem,
    PairState,
    SampleElo,
    SingleElo,
)

__all__ = [
    "GLICKO_Q",
    "DEFAULT_MAX_ORDERINGS",
    "DEFAULT_MAX_PAIRS",
    "elo_expected",
    "elo_single",
    "elo_average",
    "elo_sample",
    "elo_lsq",
    "pagerank",
    "glicko",
    "glicko_g",
    "pair_table",
    "count_orderings",
    "round_games",
    "SingleElo",
    "AverageElo",
    "SampleElo",
    "LeastSquaresElo",
    "PageRankSystem",
    "Glicko2p",
    "CounterState",
    "PairState",
    "GlickoState",
    "SPEC",
]

#: The presets and kernels of this folder (see :mod:`podium.systems`); the pairwise
#: systems have no tuning search space.
SPEC = SystemSpec(
    presets={
        "elo-single": Preset(SingleElo, {},
                             "Elo over all pairs of each round in a fixed order ([CuffedElo])"),
        "elo-average": Preset(
            AverageElo, {},
            "AverageElo: Elo averaged over all orderings of the pair games (<= 5 players)"),
        "elo-sample": Preset(SampleElo, {},
                             "SampleElo: Elo averaged over random orderings (seeded)"),
        "elo-lsq": Preset(
            LeastSquaresElo, {},
            "[CuffedElo]'s system of equations over all games so far, by least squares"),
        "pagerank": Preset(PageRankSystem, {},
                           "PageRank of the loser->winner graph of all games so far"),
        "glicko2p": Preset(Glicko2p, {},
                           "classic two-player Glicko (1999), a round = a rating period"),
    },
    kernels=("podium.systems.pairwise.kernels",),
    compile_seconds=0.5,
)
