"""The synthetic data set of [EbtekarLiu2021], Sec. 6.1, at any size.

Players' initial skills are drawn from N(mu, skill_sd^2); in every round every
player performs at skill + N(0, perf_sd^2) and is ranked by performance; between
rounds every skill moves by N(0, drift_sd^2).  The paper's set is 10,000 players
and 50 rounds with skill_sd 300 (the paper writes "variance 300"), perf_sd 200
and drift_sd 35 (ditto).

Times: round ``t`` is at ``start_time + t * round_seconds``; by default the first
round is on 2020-09-13 (:data:`DEFAULT_START_TIME`), or earlier when the history
would otherwise run past 2023-11-14 (:data:`LATEST_DEFAULT_TIME`), so that a
generated history lies in the past and ``podium rate`` accepts it without
``--allow-future`` (the same arguments always give the same times).
"""

from __future__ import annotations

import numpy as np

from podium.core.contest import Contest

__all__ = ["DEFAULT_START_TIME", "LATEST_DEFAULT_TIME", "default_start_time",
           "synthetic_contests"]

#: The default time of the first synthetic round (2020-09-13 12:26:40 UTC).
DEFAULT_START_TIME = 1_600_000_000
#: A history started by default ends by this time (2023-11-14 22:13:20 UTC) when it can.
LATEST_DEFAULT_TIME = 1_700_000_000


def default_start_time(n_rounds: int, spacing: int) -> int:
    """The time of the first of ``n_rounds`` rounds ``spacing`` seconds apart when none
    is given: :data:`DEFAULT_START_TIME`, or earlier (not before 1970) so that the last
    round is by :data:`LATEST_DEFAULT_TIME`.

    >>> default_start_time(30, 86_400)
    1600000000
    >>> default_start_time(3000, 86_400)
    1440886400
    """
    span = max(n_rounds - 1, 0) * spacing
    return max(0, min(DEFAULT_START_TIME, LATEST_DEFAULT_TIME - span))


def synthetic_contests(
    n_players: int = 10_000,
    n_rounds: int = 50,
    *,
    mu: float = 1500.0,
    skill_sd: float = 300.0,
    perf_sd: float = 200.0,
    drift_sd: float = 35.0,
    seed: int = 0,
    start_time: int | None = None,
    round_seconds: int = 86_400,
    participation: float = 1.0,
    tie_resolution: float = 0.0,
) -> list[Contest]:
    """Generate the seeded synthetic history.

    Parameters
    ----------
    participation:
        Probability that a player takes part in a round (1: everybody, as in the paper).
    tie_resolution:
        If positive, performances are rounded to multiples of this many rating
        points before ranking, which creates ties (0: no ties, as in the paper).
    start_time, round_seconds:
        ``time_seconds`` of round ``t`` is ``start_time + t * round_seconds``; by
        default ``start_time`` is :func:`default_start_time` (2020-09-13, earlier for
        a history that would run past 2023-11-14).
    """
    if n_players < 2 or n_rounds < 1:
        raise ValueError("need at least 2 players and 1 round")
    if start_time is None:
        start_time = default_start_time(n_rounds, round_seconds)
    rng = np.random.default_rng(seed)
    handles = np.array([f"p{i:0{len(str(n_players - 1))}d}" for i in range(n_players)])
    skill = rng.normal(mu, skill_sd, n_players)
    contests = []
    for t in range(n_rounds):
        if t:
            skill = skill + rng.normal(0.0, drift_sd, n_players)
        perf = skill + rng.normal(0.0, perf_sd, n_players)
        if participation < 1.0:
            present = rng.random(n_players) < participation
            if present.sum() < 2:
                present[:2] = True
        else:
            present = np.ones(n_players, dtype=bool)
        idx = np.flatnonzero(present)
        score = perf[idx]
        if tie_resolution > 0:
            score = np.round(score / tie_resolution) * tie_resolution
        contests.append(
            Contest.from_scores(
                handles[idx].tolist(), score, name=f"synthetic round {t + 1}",
                time_seconds=start_time + t * round_seconds,
            )
        )
    return contests
