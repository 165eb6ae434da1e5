"""Pairwise games ([CuffedElo]) as rating systems for multiplayer contests.

:class:`~podium.systems.base.RatingSystem` wrappers of the functions of
:mod:`podium.systems.pairwise.functional`, declared in the folder's ``SPEC``
(``podium rate --system elo-single`` ...).  A contest is fed **as all pairs**: every
pair ``(i, j)`` with ``i`` placed strictly better is a game won by ``i``; a tie is a
draw (``ties="draw"``, the default: ``o = 1/2``) or no game at all (``ties="skip"``).

========================  ==================  ========================================
name                      class               what it is
========================  ==================  ========================================
``elo-single``            :class:`SingleElo`  SingleElo over the round's pair games in
                                              a fixed order (:func:`round_games`)
``elo-average``           :class:`AverageElo` AverageElo: mean over *every* ordering of
                                              the round's games (rounds of <= 5 players)
``elo-sample``            :class:`SampleElo`  SampleElo: mean over ``samples`` random
                                              orderings (seeded)
``elo-lsq``               :class:`LeastSquaresElo`  the seed's system of equations over
                                              every game so far, solved by least squares
``pagerank``              :class:`PageRankSystem`  PageRank of the "loser -> winner"
                                              graph of every game so far
``glicko2p``              :class:`Glicko2p`   Glickman's (1999) two-player Glicko, one
                                              round = one rating period
========================  ==================  ========================================

Order of the games of one round (order-dependent systems): participants in
standings order ``0..N-1`` (best first; inside a tie group, the order of the
contest), the games are ``(0,1), (0,2), ..., (0,N-1), (1,2), ..., (N-2,N-1)``
(row by row: ``np.triu_indices(N, 1)``), each won by the first player unless the
two tie.  The ratings entering a round are the ones the Rater passes (the
players' ratings after their previous round).

``glicko2p`` is Glickman's classic Glicko with ``q = ln 10 / 400``; the all-pairs
``glicko`` of :mod:`podium.systems.glicko` is multi-skill's variant (the round as one
highly informative match, logistic spread ``beta``).  Their ``g`` is the same function
of the deviation (``beta = 400 (pi / sqrt 3) / ln 10`` makes ``1 / hypot(1, s / beta)``
equal ``1 / sqrt(1 + 3 q^2 s^2 / pi^2)``), but the two systems evaluate it in different
floating-point order, and each reproduces its own reference bit for bit, so they keep
their own arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

import podium.systems.base.entity_teams as TM
from podium.core.explain import Explanation
from podium.errors import ConfigError
from podium.systems.base import (
    ArrayState,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    int_scalar,
    param,
    player_array,
    whole_array,
)
from podium.systems.pairwise.functional import (
    DEFAULT_MAX_ORDERINGS,
    DEFAULT_MAX_PAIRS,
    GLICKO_Q,
    Ties,
    average_over_orderings,
    check_ties,
    glicko_g,
    lsq_solve,
    merge_pairs,
    orderings_capped,
    pagerank_solve,
    refuse_too_many_orderings,
    round_games,
    sample_orderings,
)

__all__ = [
    "CounterState",
    "PairState",
    "GlickoState",
    "SingleElo",
    "AverageElo",
    "SampleElo",
    "LeastSquaresElo",
    "PageRankSystem",
    "Glicko2p",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: glicko2p warns when a rating moves by more than this in one round (a diagnostic only).
_GLICKO_JUMP = 1000.0


class CounterState(ArrayState):
    """State of the memoryless pairwise systems: only the number of rounds rated (SampleElo
    draws the orderings of round ``t`` from ``default_rng([seed, t])``)."""

    FIELDS = (int_scalar("rounds"),)
    rounds: int


@dataclass(frozen=True)
class _EloBase(RatingSystem):
    """Common parameters of the Elo family ([CuffedElo], "The Elo rating system")."""

    k: float = param(1.0, "positive")
    initial: float = param(1200.0, "finite")
    scale: float = param(400.0, "positive")
    ties: Ties = "draw"

    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("initial", 0.0)
    team_rule: ClassVar[str | None] = (
        "a team as one entity (weighted mean rating) playing the round's pair games, each "
        "member moved by its weight's share of the entity's change (docs/teams.md)")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ties(self.ties)

    def make_state(self) -> CounterState:
        return CounterState()

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round; a team round is rated as a round of entities
        (:func:`~podium.systems.base.entity_teams.rate_as_entities`: the entities play the round's
        pair games, the round counts once, ``perf`` is the entity's change)."""
        if rnd.is_team_round:
            return TM.rate_as_entities(rnd, lambda ent: self._rate(state, ent))
        return self._rate(state, rnd)

    def _rate(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """The individual update of one round."""
        raise NotImplementedError

    @property
    def _c(self) -> float:
        return math.log(10.0) / self.scale

    def _output(self, state: SystemState, rnd: RoundInput, mu: FloatArray) -> RoundOutput:
        assert isinstance(state, CounterState)
        state.rounds += 1
        return RoundOutput(mu=mu, sigma=np.zeros(mu.size), perf=mu - rnd.mu)


@dataclass(frozen=True)
class SingleElo(_EloBase):
    """SingleElo over all pairs of each round, in the order of :func:`round_games`.

    Parameters
    ----------
    k:
        K factor (default 1: the seed's update has none).  With all pairs, a
        player of an ``N``-player round plays ``N - 1`` games, so ratings move by
        up to ``k (N - 1)``; ``k ~ 32 / (N - 1)`` mimics one chess game per round.
    initial:
        Newcomer rating (1200).
    scale:
        Points per factor 10 in the odds (400).
    ties:
        ``"draw"`` (a tie is a game with ``o = 1/2``) or ``"skip"`` (no game).

    ``mu`` is the Elo rating, ``sigma`` is 0 (Elo has no uncertainty) and
    ``perf`` the rating change of the round.
    """

    name: ClassVar[str] = "elo-single"

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The player's games in the order they were played, one ``K (o - E)`` each
        (:mod:`podium.systems.pairwise.explain`)."""
        from podium.systems.pairwise.explain import explain_single_elo

        return explain_single_elo(self, state, rnd, position)

    def _rate(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        import podium.systems.pairwise.kernels as K

        r = np.array(rnd.mu, dtype=np.float64)
        K.elo_round(r, np.ascontiguousarray(rnd.lo), float(self.k), self._c,
                    self.ties == "draw")
        return self._output(state, rnd, r)


@dataclass(frozen=True)
class AverageElo(_EloBase):
    """AverageElo of each round: the mean of SingleElo over every ordering of the round's
    pair games, from the ratings entering the round.

    A round of ``N`` players has ``N (N - 1) / 2`` distinct games and ``(N (N-1)/2)!``
    orderings: with the default ``max_orderings = 10!`` rounds of up to 5 players are
    accepted; a larger round raises :class:`~podium.errors.ConfigError` (use
    ``elo-sample``).  Other parameters, ``sigma`` and ``perf`` as :class:`SingleElo`.
    """

    name: ClassVar[str] = "elo-average"

    max_orderings: int = param(DEFAULT_MAX_ORDERINGS, "positive_int")

    def _rate(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        # a round's games are distinct pairs: m! orderings; check before building them
        n = rnd.players.size
        m = n * (n - 1) // 2
        if self.ties == "skip":
            _, sizes = np.unique(rnd.lo, return_counts=True)
            m -= int((sizes * (sizes - 1) // 2).sum())
        r0 = np.array(rnd.mu, dtype=np.float64)
        try:
            if orderings_capped([1] * min(m, 10_000), self.max_orderings) is None:
                refuse_too_many_orderings(m, self.max_orderings)
            a, b, o = round_games(rnd.lo, self.ties)
            mu = average_over_orderings(r0, a, b, o, float(self.k), self._c, self.max_orderings)
        except ConfigError as exc:
            raise ConfigError(f"contest {rnd.contest.label!r} ({rnd.players.size} players): "
                              f"{exc}") from None
        return self._output(state, rnd, mu)


@dataclass(frozen=True)
class SampleElo(_EloBase):
    """SampleElo of each round: the mean of SingleElo over ``samples`` random orderings of
    the round's pair games (uniform; round ``t`` uses ``numpy.random.default_rng([seed, t])``,
    so a history rates identically every time, checkpoints included).

    Cost: ``samples * N (N - 1) / 2`` Elo steps per round.  Other parameters, ``sigma`` and
    ``perf`` as :class:`SingleElo`.
    """

    name: ClassVar[str] = "elo-sample"

    samples: int = param(100, "positive_int")
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ConfigError(f"seed must be an integer >= 0, got {self.seed!r}")

    def _rate(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        assert isinstance(state, CounterState)
        a, b, o = round_games(rnd.lo, self.ties)
        rng = np.random.default_rng([self.seed, state.rounds])
        r0 = np.array(rnd.mu, dtype=np.float64)
        mu = sample_orderings(r0, a, b, o, float(self.k), self._c, self.samples, rng)
        return self._output(state, rnd, mu)


# ---------------------------------------------------------------------- global systems
class PairState(ArrayState):
    """Every pair of players that ever met: sorted keys ``a << 32 | b`` (``a < b``) and the
    total scores ``w_ab`` (of ``a`` against ``b``) and ``w_ba``."""

    FIELDS = (
        int_scalar("n"), whole_array("keys", np.int64), whole_array("w_ab"), whole_array("w_ba"),
    )
    keys: IntArray
    w_ab: FloatArray
    w_ba: FloatArray

    def add(self, gi: IntArray, gj: IntArray, o: FloatArray,
            games: FloatArray | None = None) -> None:
        """Add games ``(gi, gj, o)`` of weights ``games`` (``None``: 1)."""
        self.keys, self.w_ab, self.w_ba = merge_pairs(self.keys, self.w_ab, self.w_ba, gi, gj,
                                                       o, games)

    def pairs(self) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
        return self.keys >> 32, self.keys & 0xFFFFFFFF, self.w_ab, self.w_ba


@dataclass(frozen=True)
class _GlobalBase(RatingSystem):
    """Systems that re-solve over every game so far after each round."""

    ties: Ties = "draw"
    max_pairs: int = param(DEFAULT_MAX_PAIRS, "positive_int")

    team_rule: ClassVar[str | None] = (
        "every pair of members of two teams plays the teams' game, of weight w_i w_j, "
        "into the history of games (docs/teams.md)")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ties(self.ties)

    def make_state(self) -> PairState:
        return PairState()

    def _round_pairs(self, state: SystemState, rnd: RoundInput) -> tuple[
            IntArray, IntArray, FloatArray, FloatArray | None]:
        """The round's games ``(a, b, o, weight)`` by position: all pairs of an individual
        round (weight ``None``: 1), every pair of members of different teams in a team
        round (:func:`~podium.systems.base.entity_teams.member_games`, weight ``w_a w_b``)."""
        assert isinstance(state, PairState)
        n = rnd.players.size
        if rnd.is_team_round:
            off = np.asarray(rnd.team_offsets, dtype=np.int64).tolist()
            # pairs across teams: all pairs but those inside a team
            count = (n * n - sum((b - a) ** 2 for a, b in zip(off, off[1:], strict=False))) // 2
        else:
            count = n * (n - 1) // 2
        if count + state.keys.size > self.max_pairs:
            raise ConfigError(
                f"contest {rnd.contest.label!r}: {self.name} keeps every pair of players that "
                f"ever met; {state.keys.size:,} known pairs plus this round's "
                f"{count:,} exceed max_pairs={self.max_pairs:,} (raise it if the "
                "memory is there; these systems are meant for small histories)"
            )
        if rnd.is_team_round:
            w = np.ones(n) if rnd.weight is None else rnd.weight
            return TM.member_games(rnd.lo, np.asarray(rnd.team_offsets), w, self.ties)
        return (*round_games(rnd.lo, self.ties), None)

    def solve(self, state: SystemState) -> FloatArray:
        """The current solution for *every* player (index order of the Rater's table)."""
        raise NotImplementedError

    def _round_solution(self, n: int, a: IntArray, b: IntArray, w_ab: FloatArray,
                        w_ba: FloatArray) -> FloatArray:
        """The round's performances: the system's solution of the round's games alone."""
        raise NotImplementedError

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """Add the round's games to the history and solve it again (``mu``); ``perf`` is
        :meth:`_round_solution` of the round's games alone, ``sigma`` is 0.

        A team round: a game between two teams is a game between every pair of their
        members, of weight ``w_i w_j`` (it adds ``w_i w_j`` times the usual scores to the
        pair's totals); members of one team play no game."""
        assert isinstance(state, PairState)
        pa, pb, o, g = self._round_pairs(state, rnd)
        players = rnd.players
        state.add(players[pa], players[pb], o, g)
        mu = self.solve(state)[players]
        n = players.size
        keys, w_ab, w_ba = merge_pairs(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), pa, pb, o,
                                        g)
        perf = self._round_solution(n, keys >> 32, keys & 0xFFFFFFFF, w_ab, w_ba)
        return RoundOutput(mu=mu, sigma=np.zeros(n), perf=perf)


@dataclass(frozen=True)
class LeastSquaresElo(_GlobalBase):
    """The seed's system of equations over every game rated so far (:func:`elo_lsq`).

    After each round the pair table gains the round's games and the whole
    least-squares system is solved again, so every rating can move; the Rater
    records the new values of the round's participants (the others' rows keep
    the value of their last round -- :meth:`solve` gives everybody's current
    value).  ``sigma`` is 0; ``perf`` is the solution of the round's games alone,
    shifted to mean ``anchor``.

    Parameters
    ----------
    anchor:
        ``R_1`` (1200), also every newcomer's rating.
    pseudo_count:
        Added to both win counts of every pair (1/2; see :func:`elo_lsq`).
    scale:
        400.
    ties:
        ``"draw"`` (1/2 to each side) or ``"skip"``.
    max_pairs:
        Refuse histories with more distinct pairs than this (2,000,000).
    """

    name: ClassVar[str] = "elo-lsq"

    anchor: float = param(1200.0, "finite")
    #: Must be > 0 for the rating system: a multiplayer round always has pairs with a
    #: single winner.
    pseudo_count: float = param(0.5, "positive")
    scale: float = param(400.0, "positive")

    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("anchor", 0.0)

    def solve(self, state: SystemState) -> FloatArray:
        assert isinstance(state, PairState)
        a, b, w_ab, w_ba = state.pairs()
        return lsq_solve(state.n, a, b, w_ab, w_ba, self.anchor, self.pseudo_count, self.scale)

    def _round_solution(self, n: int, a: IntArray, b: IntArray, w_ab: FloatArray,
                        w_ba: FloatArray) -> FloatArray:
        perf = lsq_solve(n, a, b, w_ab, w_ba, 0.0, self.pseudo_count, self.scale)
        perf += self.anchor - perf.mean()
        return perf


@dataclass(frozen=True)
class PageRankSystem(_GlobalBase):
    """PageRank (:func:`pagerank`) of the graph of every game rated so far.

    ``mu`` is the PageRank score times the number of players known (so the
    average player has 1, a newcomer starts at 1); as in ``elo-lsq`` the whole
    vector is recomputed after each round and the Rater records the round's
    participants.  ``sigma`` is 0; ``perf`` is the PageRank of the round's games
    alone, times the round size.

    Parameters
    ----------
    damping:
        0.85.
    tol, max_iter:
        Power iteration: stop when the L1 change is below ``tol`` (1e-12);
        :class:`~podium.errors.ConvergenceError` after ``max_iter`` (10,000).
    ties, max_pairs:
        As :class:`LeastSquaresElo`.
    """

    name: ClassVar[str] = "pagerank"

    damping: float = param(0.85, "open_unit")
    tol: float = param(1e-12, "positive")
    max_iter: int = param(10_000, "positive_int")

    newcomer_prior: ClassVar[tuple[str | float, str | float]] = (1.0, 0.0)

    def solve(self, state: SystemState) -> FloatArray:
        assert isinstance(state, PairState)
        a, b, w_ab, w_ba = state.pairs()
        p = pagerank_solve(state.n, a, b, w_ab, w_ba, self.damping, self.tol, self.max_iter)
        return p * state.n

    def _round_solution(self, n: int, a: IntArray, b: IntArray, w_ab: FloatArray,
                        w_ba: FloatArray) -> FloatArray:
        return n * pagerank_solve(n, a, b, w_ab, w_ba, self.damping, self.tol, self.max_iter)


# ---------------------------------------------------------------------- Glicko
class GlickoState(ArrayState):
    """Per player the index of the last round (rating period) played (-1: never), and the
    number of rounds rated."""

    FIELDS = (int_scalar("rounds"), player_array("last_round", np.int64, fill=-1))
    rounds: int
    last_round: IntArray


@dataclass(frozen=True)
class Glicko2p(RatingSystem):
    """Classic two-player Glicko (Glickman 1999) with each round one rating period in which
    every pair of participants played one game (:func:`glicko` gives the formulas).

    At the start of a round a returning player's RD grows to
    ``min(sqrt(RD^2 + c^2 t), rd0)``, ``t`` the number of rounds rated since the
    player's last one (1 if it played the previous round); every participant is
    then updated from the start-of-round ratings of all others (so the order of
    the pair games does not matter).  Each player/round costs ``N - 1`` terms:
    ``O(N^2)`` per round, in parallel.

    ``mu`` is Glicko's rating ``r``, ``sigma`` its RD; ``perf`` is the round's
    performance on its own, ``r + d^2 q sum_j g_j (s_j - E_j)`` (the update an
    infinitely uncertain prior would take; NaN when the round carries no
    information, i.e. ``1/d^2`` is 0 or underflows).

    Caution: the update is one Newton step of the period's likelihood, which is
    unstable when a period holds thousands of games against opponents far from
    the player (``E`` near 0 or 1): on the Codeforces history ratings run away
    to millions.  A round moving any rating by more than 1000 points adds a
    warning to the round's report.  Use it for small rounds / pairwise data.

    Parameters
    ----------
    initial, rd0:
        Newcomer rating and RD (1500, 350); ``rd0`` also caps RD.
    c:
        RD growth per round (34.6).
    ties:
        ``"draw"`` (``s = 1/2``) or ``"skip"``.
    """

    name: ClassVar[str] = "glicko2p"

    initial: float = param(1500.0, "finite")
    rd0: float = param(350.0, "positive")
    c: float = param(34.6, "nonnegative")
    ties: Ties = "draw"

    newcomer_prior: ClassVar[tuple[str | float, str | float]] = ("initial", "rd0")
    team_rule: ClassVar[str | None] = (
        "a team as one entity (weighted mean rating, rms RD after each member's own RD "
        "growth), each member moved by its weight's share of the entity's change of r and "
        "log RD^2 (docs/teams.md)")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_ties(self.ties)

    def make_state(self) -> GlickoState:
        return GlickoState()

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """One ``g(RD_j) (s_j - E_j)`` term per opponent, scaled
        (:mod:`podium.systems.pairwise.explain`)."""
        from podium.systems.pairwise.explain import explain_glicko2p

        return explain_glicko2p(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One rating period.

        A team round: every member's RD first grows with its own inactivity (step 1,
        from its ``last_round``); the teams are then rated as a period of entities
        (:func:`~podium.systems.base.entity_teams.rate_as_entities`) and every member's
        ``last_round`` becomes this round, as for a round of its own.
        """
        assert isinstance(state, GlickoState)
        players = rnd.players
        rd = self.grown_rd(state, players, rnd.sigma)
        r = np.ascontiguousarray(rnd.mu, dtype=np.float64)
        if rnd.is_team_round:
            out = TM.rate_as_entities(
                rnd, lambda ent: RoundOutput(*self._period(ent.mu, ent.sigma, ent.lo)),
                mu=r, sigma=rd)
            mu, new_rd, perf = out.mu, out.sigma, out.perf
        else:
            mu, new_rd, perf = self._period(r, rd, rnd.lo)
        state.last_round[players] = state.rounds
        state.rounds += 1
        warnings: tuple[str, ...] = ()
        jumps = int(np.count_nonzero(np.abs(mu - r) > _GLICKO_JUMP))
        if jumps:
            warnings = (
                f"contest {rnd.contest.label!r}: {jumps} rating(s) moved by more than "
                f"{_GLICKO_JUMP:g} points; classic Glicko's one-step update is unstable when a "
                "rating period holds many games against far-away opponents",
            )
        return RoundOutput(mu=mu, sigma=new_rd, perf=perf, warnings=warnings)

    def grown_rd(self, state: SystemState, players: IntArray, rd: FloatArray) -> FloatArray:
        """Step 1 of a period: each rated player's RD grown by its inactivity,
        ``min(sqrt(RD^2 + c^2 t), rd0)`` with ``t`` the rounds rated since its last one; a
        player with no earlier round (or no row in ``state`` yet) keeps ``rd``.  Used by
        :meth:`round_update` and :meth:`explain`."""
        assert isinstance(state, GlickoState)
        idx = np.asarray(players, dtype=np.int64)
        last = np.full(idx.size, -1, dtype=np.int64)
        known = idx < state.n
        last[known] = state.last_round[idx[known]]
        t = np.where(last >= 0, state.rounds - last, 0).astype(np.float64)
        grown = np.minimum(np.sqrt(rd**2 + self.c**2 * t), self.rd0)
        out: FloatArray = np.where(last >= 0, grown, rd)  # step 1 only for rated players
        return out

    def _period(self, r: FloatArray, rd: FloatArray,
                lo: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Step 2 of one period from the grown ``rd``: ``(r', RD', perf)``."""
        import podium.systems.pairwise.kernels as K

        g = np.asarray(glicko_g(rd), dtype=np.float64)
        u, v, games = K.glicko_round_sums(np.ascontiguousarray(r), g, np.ascontiguousarray(lo),
                                          GLICKO_Q, self.ties == "draw")
        played = games > 0
        inv_var = 1.0 / rd**2 + GLICKO_Q**2 * v
        new_rd = np.where(played, 1.0 / np.sqrt(inv_var), rd)
        mu = np.where(played, r + GLICKO_Q * u / inv_var, r)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            perf = r + u / (GLICKO_Q * v)
        perf[~np.isfinite(perf)] = np.nan  # no information (v = 0 or underflowed)
        return mu, new_rd, perf
