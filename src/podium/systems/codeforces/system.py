"""The Codeforces rating system ([Mirzayanov2015]), exactly as Codeforces computes it, in integers.

One round ([Mirzayanov2015], "Open Codeforces Rating System", October 2015, with the
correction applied since round 327):

1. ``P(j beats i) = 1 / (1 + 10^((r_i - r_j) / 400))``; the seed (expected place) of
   ``i`` is ``seed_i = 1 + sum_{j != i} P(j beats i)``.
2. Every tied participant takes the worst place of its tie (``place = hi + 1``).
3. ``m_i = sqrt(place_i * seed_i)``, the geometric mean of actual and expected place.
4. The needed rating ``R_i``: Codeforces' binary search over ``[1, 8000)`` keeps the
   largest integer ``R`` whose seed among the *other* participants,
   ``1 + sum_{j != i} P(j beats a player rated R)``, is still ``>= m_i``.
5. ``d_i = (R_i - r_i) / 2``.
6. Anti-inflation (after round 327): ``d_i += -sum(d) / n - 1``; then over the
   ``s = min(n, 4 * round(sqrt(n)))`` participants with the highest old ratings,
   ``d_i += min(max(-sum_s(d) / s, -10), 0)`` for everybody.
7. New rating ``r_i + d_i``.

All divisions truncate toward zero (Java's integer ``/``); these details were checked
against the official rating changes of contest 908 (6691 of 6691 reproduced, see
:mod:`podium.replay`).  After every round the two invariants of [Mirzayanov2015] are checked
(:func:`check_invariants`) and any breach is reported in ``RoundOutput.warnings``.

Speed: the seeds of all participants and of every candidate rating of every binary
search come from one FFT convolution of the rating histogram with the Elo kernel per
round (see :mod:`podium.systems.codeforces.kernels`), so a round costs
``O(V log V + N log 8000)`` (``V`` the rating range) instead of ``O(N^2 log 8000)``.

Draws: Codeforces has no rule of its own for a round in which everybody tied; its
rule for ties (step 2, checked on official rating changes) makes it a shared last
place, and the round is rated with it (``all_tied="rate"``, the default;
``"skip"`` leaves it unrated).  Before the corrections, a draw costs the favourite
exactly what a loss would; the first correction hands every participant the same
share of the round's total back, so the favourite loses and the underdog gains,
and two equal players each lose the 1 point that the correction takes from every
participant of every round.

Newcomers: the 2015 rules (``scheme="2015"``, default) start everybody at 1500.  The
2020 rules (``scheme="2020"``, Codeforces blog entry 77890, May 2020) compute with 1400
for a new account but *display* 0 before its first round and add display bonuses of
500, 350, 250, 150, 100 and 50 (1400 in all) after its first six rounds, so that the
displayed rating equals the computed one from the sixth round on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
import numpy.typing as npt

import podium.systems.base.entity_teams as TM
from podium.core.contest import Contest
from podium.core.explain import Explanation
from podium.errors import ConfigError
from podium.systems.base import (
    ELO_BETA,
    ArrayState,
    PerformanceModel,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
)

__all__ = [
    "Codeforces",
    "CodeforcesState",
    "CodeforcesRound",
    "codeforces_round",
    "check_invariants",
    "elo_kernel",
    "DISPLAY_BONUSES_2020",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Display bonuses of the 2020 rules after a player's 1st..6th rated round (blog 77890).
DISPLAY_BONUSES_2020: tuple[int, ...] = (500, 350, 250, 150, 100, 50)

#: A comparison of the needed-rating search closer than this (in places) is re-decided
#: from directly summed seeds.  The FFT's rounding error is below 1e-9 even for
#: 20,000 participants (tests/test_codeforces.py checks 1e-8).
_FFT_TOL = 1e-6

_KTAB_HALF = 20_000
_ktab_cache: dict[int, FloatArray] = {}


def elo_kernel(half: int = _KTAB_HALF) -> tuple[FloatArray, int]:
    """``(table, x0)`` with ``table[x - x0] = 1 / (1 + 10^(x / 400))`` for integer
    ``x`` in ``[-half, half]``: the probability that a player beats one rated ``x``
    points higher ([Mirzayanov2015], the formula of ``P_{i,j}``)."""
    tab = _ktab_cache.get(half)
    if tab is None:
        x = np.arange(-half, half + 1, dtype=np.float64)
        tab = 1.0 / (1.0 + np.power(10.0, x / 400.0))
        _ktab_cache[half] = tab
    return tab, -half


@dataclass(frozen=True)
class CodeforcesRound:
    """Every intermediate quantity of one Codeforces round (participants in the order
    given).

    ``seed`` and ``m`` are the expected place and the geometric mean with the actual
    place, ``need`` the needed rating ``R``, ``delta`` the final changes (after both
    corrections), ``new`` the new ratings; ``inc1`` and ``inc2`` the two corrections,
    ``top_size`` the ``s`` of the second one; ``n_direct`` how many comparisons of the
    binary searches were decided by direct summation.
    """

    seed: FloatArray
    m: FloatArray
    need: IntArray
    delta: IntArray
    new: IntArray
    inc1: int
    inc2: int
    top_size: int
    n_direct: int


def codeforces_round(ratings: npt.ArrayLike, places: npt.ArrayLike) -> CodeforcesRound:
    """One Codeforces rating round ([Mirzayanov2015] with the round-327 corrections), exactly.

    Parameters
    ----------
    ratings:
        Integer old rating of each participant (a newcomer's computing rating: 1500,
        or 1400 under the 2020 rules).
    places:
        1-based place of each participant, ties already resolved to the *worst*
        place of the tie (``hi + 1``).  The order of the participants matters only
        for ties in old rating at the edge of the top-``s`` group of the second
        correction, where the earlier one counts (Codeforces sorts stably by old
        rating a list in standings order); pass them in standings order.

    Returns
    -------
    CodeforcesRound
    """
    import podium.systems.codeforces.kernels as K

    r = np.ascontiguousarray(ratings, dtype=np.int64)
    place = np.ascontiguousarray(places, dtype=np.int64)
    n = r.size
    if place.shape != r.shape or r.ndim != 1:
        raise ValueError("ratings and places must be one-dimensional and of equal length")
    if n == 0:
        e = np.zeros(0, dtype=np.int64)
        return CodeforcesRound(np.zeros(0), np.zeros(0), e, e, e, 0, 0, 0, 0)
    if np.any(place < 1):
        raise ValueError("places are 1-based")
    rmin = int(r.min())
    rmax = int(r.max())
    vlo = min(K.CF_SEARCH_LO, rmin)
    vhi = max(K.CF_SEARCH_HI, rmax)
    half = max(_KTAB_HALF, vhi - rmin, rmax - vlo)
    ktab, k0 = elo_kernel(half)
    dvals, dcounts = np.unique(r, return_counts=True)
    counts = np.zeros(rmax - rmin + 1)
    counts[dvals - rmin] = dcounts
    # S(v) = sum_j K(v - r_j) for v in [vlo, vhi]: "valid" convolution of the histogram
    # with K on [vlo - rmax, vhi - rmin]
    kseg = ktab[vlo - rmax - k0: vhi - rmin - k0 + 1]
    lc = counts.size
    nfft = 1 << (lc + kseg.size - 2).bit_length()  # power of two >= full length
    full = np.fft.irfft(np.fft.rfft(counts, nfft) * np.fft.rfft(kseg, nfft), nfft)
    sums = np.ascontiguousarray(full[lc - 1: kseg.size])
    seed, m, need, n_direct = K.needed_ratings(
        r, place, sums, vlo, ktab, k0, dvals.astype(np.int64), dcounts.astype(np.float64),
        _FFT_TOL,
    )
    delta, inc1, inc2, s = K.corrected_deltas(r, need)
    return CodeforcesRound(seed, m, need, delta, r + delta, int(inc1), int(inc2), int(s),
                           int(n_direct))


def check_invariants(
    ratings: npt.ArrayLike, places: npt.ArrayLike, delta: npt.ArrayLike,
    handles: tuple[str, ...] | list[str] | None = None, label: str = "?",
) -> list[str]:
    """The two invariants of [Mirzayanov2015], as warnings (empty when both hold).

    1. If ``A`` had a lower rating than ``B`` before the round and finished on a
       (strictly) worse place, ``A``'s new rating must not exceed ``B``'s.
    2. If ``A`` finished on a (strictly) better place than ``B`` but had a lower
       rating before the round, ``A``'s change must be at least ``B``'s.

    Tied participants (equal places) are not compared: the seed speaks of a worse and
    a better place.
    """
    import podium.systems.codeforces.kernels as K

    r = np.ascontiguousarray(ratings, dtype=np.int64)
    p = np.ascontiguousarray(places, dtype=np.int64)
    d = np.ascontiguousarray(delta, dtype=np.int64)
    if r.size < 2:
        return []
    if np.any(np.diff(p) < 0):
        order = np.argsort(p, kind="stable")
        r, p, d = r[order], p[order], d[order]
        if handles is not None:
            handles = [handles[k] for k in order.tolist()]
    else:
        order = None
    c1, a1, b1, c2, a2, b2 = K.invariant_breaches(r, p, d)

    def who(k: int) -> str:
        h = handles[k] if handles is not None else f"#{k}"
        return f"{h!r} (place {p[k]}, rating {r[k]} -> {r[k] + d[k]}, change {d[k]:+d})"

    out = []
    if c1:
        out.append(
            f"contest {label!r}: Codeforces invariant 1 broken for {c1} participant(s): "
            f"{who(a1)} finished below and was rated below {who(b1)} before the round, "
            "but is rated above afterwards"
        )
    if c2:
        out.append(
            f"contest {label!r}: Codeforces invariant 2 broken for {c2} participant(s): "
            f"{who(a2)} finished above {who(b2)} with a lower rating before the round, "
            "but gained less"
        )
    return out


class CodeforcesState(ArrayState):
    """No per-player state beyond the rating: the system is memoryless (the 2020 rules'
    display offset follows from the number of rounds played, which the Rater keeps).
    Its checkpoint image is empty."""


@dataclass(frozen=True)
class Codeforces(RatingSystem):
    """The Codeforces rating system ([Mirzayanov2015]), in integers, as Codeforces computes it.

    Parameters
    ----------
    scheme:
        ``"2015"`` (default): newcomers enter at 1500 and the displayed rating is the
        computed one.  ``"2020"``: the rules of May 2020 (Codeforces blog entry 77890):
        a newcomer is *computed* at 1400 but *displayed* as 0, and after its first six
        rounds the displayed rating gets bonuses of 500, 350, 250, 150, 100, 50
        (:data:`DISPLAY_BONUSES_2020`), i.e. displayed = computed - 1400 + the bonuses
        earned so far; from the sixth round on both are equal.
    check_invariants:
        Check the two invariants of [Mirzayanov2015] after every round (``O(N log N)``) and
        report breaches in ``RoundOutput.warnings`` (default ``True``).
    sig_noob:
        The constant reported as every player's ``sigma`` (default 350, elo-mmr-py's
        newcomer sigma).  Codeforces has no uncertainty: sigma never changes and plays
        no part in the update.

    Notes
    -----
    ``mu`` is the rating Codeforces *displays* (for the 2015 rules that is also the
    computed one; under the 2020 rules the computed rating is ``mu + 1400 - the
    bonuses of the rounds played``, obtained from ``RoundInput.played``), so
    :meth:`display_rating` returns ``mu`` and the Rater's ratings table shows what a
    Codeforces profile shows.  ``perf`` is the needed rating ``R`` of step 4 ([Mirzayanov2015]
    calls it the rating the participant "should have had" to be expected at place
    ``m``), on the computed scale.  Ratings are integers; a non-integral ``mu`` coming
    in (a foreign checkpoint) is rounded, with a warning.  The contest's ``weight``
    and ``perf_ceiling`` play no part (Codeforces has neither).
    """

    name: ClassVar[str] = "codeforces"
    team_rule: ClassVar[str | None] = (
        "a team as one entity (weighted mean computed rating, rounded), each member's change "
        "its weight times the entity's, rounded to an integer (docs/teams.md)")

    scheme: Literal["2015", "2020"] = "2015"
    check_invariants: bool = param(True, "bool")
    sig_noob: float = param(350.0, "nonnegative")

    def __post_init__(self) -> None:
        super().__post_init__()
        scheme = str(self.scheme)
        if scheme not in ("2015", "2020"):
            raise ConfigError(f"scheme must be '2015' or '2020', got {self.scheme!r}")
        object.__setattr__(self, "scheme", scheme)

    # ------------------------------------------------------------------ interface
    @property
    def computing_newcomer_rating(self) -> int:
        """The rating a newcomer's first round is computed with (1500 or 1400)."""
        return 1500 if self.scheme == "2015" else 1400

    def display_offset(self, played: npt.ArrayLike) -> IntArray:
        """Computed minus displayed rating after ``played`` rated rounds: 0 under the
        2015 rules; ``1400 - sum(DISPLAY_BONUSES_2020[:played])`` under the 2020 rules."""
        k = np.minimum(np.asarray(played, dtype=np.int64), len(DISPLAY_BONUSES_2020))
        if self.scheme == "2015":
            return np.zeros(k.shape, dtype=np.int64)
        left = 1400 - np.concatenate([[0], np.cumsum(DISPLAY_BONUSES_2020)])
        return left[k].astype(np.int64)

    def newcomer(self, contest: Contest | None = None) -> tuple[float, float]:
        return float(self.computing_newcomer_rating - int(self.display_offset(0))), float(
            self.sig_noob
        )

    def make_state(self) -> CodeforcesState:
        return CodeforcesState()

    def season_reset(self, mu: FloatArray, sigma: FloatArray, played: IntArray, keep: float,
                     widen: float) -> tuple[FloatArray, FloatArray]:
        """The soft reset on the *computed* integer rating: ``R' = R_0 + keep (R - R_0)``
        rounded half up, ``R_0`` the computing newcomer rating (1500, or 1400 under the
        2020 rules, where ``mu`` is the displayed ``R`` minus the display offset of the
        rounds played); ``sigma`` is a constant here and stays."""
        offset = self.display_offset(played).astype(np.float64)
        r0 = float(self.computing_newcomer_rating)
        computed = np.asarray(mu, dtype=np.float64) + offset
        new = np.floor(r0 + keep * (computed - r0) + 0.5)
        return new - offset, np.asarray(sigma, dtype=np.float64).copy()

    def performance_model(
        self, sigma: FloatArray, played: IntArray, weight: float
    ) -> PerformanceModel:
        """Logistic with ``v = ELO_BETA^2 / 2`` for everybody, so that ``P(i beats j) =
        1 / (1 + 10^((mu_j - mu_i) / 400))``, [Mirzayanov2015]'s formula (which has no weight)."""
        v = np.full(sigma.shape, ELO_BETA**2 / 2.0)
        return PerformanceModel(
            "logistic", v, "Codeforces (logistic): P = 1 / (1 + 10^((mu_j - mu_i) / 400))"
        )

    def explain(self, state: SystemState, rnd: RoundInput, position: int) -> Explanation:
        """The seed with one win probability per opponent, the place, the needed rating, and the
        change as raw delta plus the two corrections (they add up exactly).
        (:mod:`podium.systems.codeforces.explain`)."""
        from podium.systems.codeforces.explain import explain_codeforces

        return explain_codeforces(self, state, rnd, position)

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        """One round, in integers.

        A team round is rated as a round of entities (:mod:`podium.systems.base.entity_teams`):
        each team's entity has the weighted mean of its members' *computed* ratings,
        rounded to an integer (halves away from zero), and takes its team's worst
        place; the entity round is an ordinary Codeforces round (both corrections),
        whose invariants are checked with the team names; each member's change is
        ``w_i d_T`` rounded to an integer (halves away from zero: a gain and a loss of
        the same size round alike), and its ``perf`` is the entity's needed rating.
        """
        warnings: list[str] = []
        label = rnd.contest.label
        mu = np.asarray(rnd.mu, dtype=np.float64)
        shown = np.rint(mu)
        if not np.array_equal(shown, mu):
            warnings.append(
                f"contest {label!r}: {int(np.count_nonzero(shown != mu))} non-integral "
                "rating(s) rounded (Codeforces ratings are integers)"
            )
        played = np.asarray(rnd.played, dtype=np.int64)
        offset_before = self.display_offset(played)
        r = shown.astype(np.int64) + offset_before
        n = r.size
        if rnd.is_team_round:
            ent = TM.entity_round(rnd, mu=r.astype(np.float64))
            r_t = TM.round_half_away(ent.mu)
            places_t = ent.hi + 1
            res = codeforces_round(r_t, places_t)
            if self.check_invariants:
                warnings.extend(check_invariants(r_t, places_t, res.delta,
                                                 ent.contest.handles, label))
            w = np.ones(n) if rnd.weight is None else np.asarray(rnd.weight, dtype=np.float64)
            tof = TM.team_of(np.asarray(rnd.team_offsets))
            new = r + TM.round_half_away(w * res.delta[tof])
            need = res.need[tof]
        else:
            places = np.asarray(rnd.hi, dtype=np.int64) + 1
            res = codeforces_round(r, places)
            if self.check_invariants:
                warnings.extend(check_invariants(r, places, res.delta, rnd.contest.handles,
                                                 label))
            new, need = res.new, res.need
        new_shown = new - self.display_offset(played + 1)
        return RoundOutput(
            mu=new_shown.astype(np.float64),
            sigma=np.full(n, float(self.sig_noob)),
            perf=need.astype(np.float64),
            warnings=tuple(warnings),
        )
