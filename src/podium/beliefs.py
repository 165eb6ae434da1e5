"""What changes a :class:`~podium.rater.Rater`'s players between rounds: the soft reset
at the start of a season, and newcomer priors taken from elsewhere.

**Seasons.**  A season boundary (:class:`SeasonStart`) is an item of a history like a
contest: :func:`start_season` applies its :class:`SeasonReset` to every rated player of
the Rater -- the rating system's :meth:`~podium.systems.RatingSystem.season_reset` gives
the new ``(mu, sigma)`` (by default ``mu`` shrunk toward the newcomer prior's mean by the
factor ``keep``, the variance widened toward the newcomer prior's by the share
``widen``), the system's per-player state takes the new belief
(:meth:`~podium.systems.base.state.SystemState.reset_belief`), and the Rater logs one
event per player (the reset, at the boundary's index) and records the boundary among
its contests.  The number of rounds each player played, its last contest time (from
which time drift is counted) and its highest display rating stay.

**Priors from elsewhere.**  :func:`seed_players` enters players into a Rater before
their first round with a given prior instead of the system's newcomer prior (a ladder's
*cross-ladder newcomer prior*, as TrueSkill 2 starts a player in a new game mode from
the other modes' skill, with the uncertainty widened: :func:`widened_prior`).  Their
first round is then rated as a debut from that prior.

Both are deterministic functions of the Rater and their arguments, so a history that
holds them replays to the same numbers, bit for bit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from podium.core.explain import Explanation, Term
from podium.errors import ConfigError
from podium.systems import RatingSystem
from podium.systems.base.explain import sum_equation

if TYPE_CHECKING:
    from podium.rater import Rater

__all__ = ["SeasonReset", "SeasonStart", "SeasonRun", "RESET_POLICIES", "start_season",
           "seed_players", "widened_prior", "explain_reset"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The named reset policies: ``name -> (keep, widen)``.
RESET_POLICIES: dict[str, tuple[float, float]] = {
    "soft": (0.8, 0.1),
    "hard": (0.0, 1.0),
    "none": (1.0, 0.0),
}
_REFERENCE = "docs/service.md, Seasons"
_SOFT_RE = re.compile(r"soft(?::([^:]+))?(?::([^:]+))?")


@dataclass(frozen=True)
class SeasonReset:
    """How a season's start changes every rated player (see
    :meth:`podium.systems.RatingSystem.season_reset`).

    Attributes
    ----------
    keep:
        The share of ``mu``'s distance from the newcomer prior's mean that stays, in
        [0, 1] (1: ``mu`` unchanged; 0: every ``mu`` is the newcomer's).
    widen:
        The share of the gap between the variance ``sigma^2`` and the newcomer prior's
        that is closed, in [0, 1] (0: ``sigma`` unchanged; 1: the newcomer's).
    """

    keep: float
    widen: float

    def __post_init__(self) -> None:
        for name in ("keep", "widen"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
                raise ConfigError(f"season reset: {name} must be a number in [0, 1], "
                                  f"got {v!r}")
            object.__setattr__(self, name, float(v))

    @classmethod
    def parse(cls, policy: str | SeasonReset | None) -> SeasonReset:
        """The reset named by ``policy``: ``soft`` (keep 0.8, widen 0.1), ``soft:KEEP``,
        ``soft:KEEP:WIDEN``, ``hard`` (everybody a newcomer: keep 0, widen 1) or
        ``none`` (a boundary only: keep 1, widen 0); ``None`` means ``soft``.

        Raises
        ------
        ConfigError
            Naming the policy and the forms accepted.
        """
        if isinstance(policy, SeasonReset):
            return policy
        text = "soft" if policy is None else str(policy).strip().lower()
        if text in RESET_POLICIES:
            return cls(*RESET_POLICIES[text])
        m = _SOFT_RE.fullmatch(text)
        if m is not None:
            try:
                keep = float(m.group(1)) if m.group(1) else RESET_POLICIES["soft"][0]
                widen = float(m.group(2)) if m.group(2) else RESET_POLICIES["soft"][1]
            except ValueError:
                pass
            else:
                if math.isfinite(keep) and math.isfinite(widen):
                    return cls(keep, widen)
        raise ConfigError(f"unknown season reset policy {policy!r}: use soft, "
                          "soft:KEEP, soft:KEEP:WIDEN (numbers in [0, 1]), hard or none")

    @property
    def text(self) -> str:
        """The policy as :meth:`parse` reads it (``hard``, ``none``, ``soft:K:W``)."""
        for name, (k, w) in RESET_POLICIES.items():
            if (self.keep, self.widen) == (k, w) and name != "soft":
                return name
        return f"soft:{self.keep!r}:{self.widen!r}"


@dataclass(frozen=True)
class SeasonStart:
    """The start of season ``number`` (2 for the first boundary) at ``time_seconds``,
    with its reset: an item of a history, between two contests."""

    number: int
    time_seconds: int
    reset: SeasonReset

    @property
    def name(self) -> str:
        """``season N``."""
        return f"season {self.number}"

    @property
    def label(self) -> str:
        """The name, for messages (as :attr:`podium.core.contest.Contest.label`)."""
        return self.name


@dataclass(frozen=True)
class SeasonRun:
    """What :func:`start_season` did: the Rater indices of the players it reset (every
    rated player, in index order), their ``(mu, sigma)`` and display rating before and
    after, their rated rounds, and the boundary's index among the Rater's contests."""

    index: int
    players: IntArray
    mu_before: FloatArray
    sigma_before: FloatArray
    mu_after: FloatArray
    sigma_after: FloatArray
    display_before: FloatArray
    display_after: FloatArray
    played: IntArray


def start_season(rater: Rater, start: SeasonStart) -> SeasonRun:
    """Apply ``start``'s reset to every rated player of ``rater`` (see the module notes).

    The boundary becomes the Rater's next contest (``len(rater.contests)``), named
    :attr:`SeasonStart.name`, with one event per player reset: the new ``mu`` and
    ``sigma``, the ``mu`` before the reset as its performance, place -1.

    Raises
    ------
    ConfigError
        When the system's state cannot take a reset (the systems that solve every
        rating from all the games so far) and the policy changes a rating.
    """
    t = rater.players
    system = rater.system
    n = t.n
    idx = np.flatnonzero(t.contests[:n] > 0).astype(np.int64)
    mu0 = t.mu[idx].copy()
    sg0 = t.sigma[idx].copy()
    played = t.contests[idx].astype(np.int64)
    mu1, sg1 = system.season_reset(mu0, sg0, played, start.reset.keep, start.reset.widen)
    mu1 = np.asarray(mu1, dtype=np.float64)
    sg1 = np.asarray(sg1, dtype=np.float64)
    if idx.size and (not np.array_equal(mu1, mu0) or not np.array_equal(sg1, sg0)):
        rater.state.reset_belief(idx, mu1, sg1)
    d0 = np.asarray(system.display_rating(mu0, sg0), dtype=np.float64)
    d1 = np.asarray(system.display_rating(mu1, sg1), dtype=np.float64)
    t.mu[idx] = mu1
    t.sigma[idx] = sg1
    t.last_change[idx] = d1 - d0
    index = len(rater.contests)
    rater.events.append(index, idx, mu1, sg1, mu0, np.full(idx.size, -1, dtype=np.int64))
    rater.contests.add(start.name, start.time_seconds, None, int(idx.size), False)
    if rater.last_time is None or start.time_seconds > rater.last_time:
        rater.last_time = start.time_seconds
    return SeasonRun(index, idx, mu0, sg0, mu1, sg1, d0, d1, played)


def seed_players(rater: Rater, handles: Sequence[str], mu: npt.ArrayLike,
                 sigma: npt.ArrayLike, time_seconds: int) -> IntArray:
    """Enter ``handles`` (unknown to ``rater``) with the priors ``N(mu, sigma^2)``, before
    their first round: they are players of no rated round whose next round is their
    debut, rated from these priors.  Returns their Rater indices.

    Raises
    ------
    ValueError
        When a handle is known to the Rater already.
    """
    t = rater.players
    handles = list(handles)
    if not handles:
        return np.zeros(0, dtype=np.int64)
    known = [h for h in handles if h in t.index]
    if known:
        raise ValueError(f"seed_players: {known[0]!r} is known to the Rater already")
    start = t.n
    t.add_players(handles, 0.0, 0.0, int(time_seconds))
    idx = np.arange(start, t.n, dtype=np.int64)
    m = np.asarray(mu, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    t.mu[idx] = m
    t.sigma[idx] = s
    rater.state.ensure_players(t.n)
    rater.state.reset_belief(idx, m, s)
    return idx


def widened_prior(system: RatingSystem, mu: FloatArray, sigma: FloatArray,
                  widen: float) -> tuple[FloatArray, FloatArray]:
    """A newcomer prior from a rating ``(mu, sigma)`` held elsewhere (another ladder of the
    same system): ``mu`` kept, the variance widened toward the system's newcomer prior by
    the share ``widen`` (as :meth:`~podium.systems.RatingSystem.season_reset` with
    ``keep = 1``), TrueSkill 2's prior for a player new to a game mode."""
    played = np.zeros(np.shape(mu), dtype=np.int64)
    return system.season_reset(np.asarray(mu, dtype=np.float64),
                               np.asarray(sigma, dtype=np.float64), played, 1.0, widen)


def explain_reset(system: RatingSystem, system_name: str, handle: str, start: SeasonStart,
                  participants: int, mu: float, sigma: float, played: int,
                  mu_after: float, sigma_after: float) -> Explanation:
    """Why ``handle``'s rating changed at the start of a season: the reset's equations,
    from the rating before it (``mu``, ``sigma``) to the one after (``mu_after``,
    ``sigma_after``, the stored values; the explanation recomputes them with the
    system's :meth:`~podium.systems.RatingSystem.season_reset` and reports both)."""
    reset = start.reset
    m, s0 = system.newcomer(None)
    got_mu, got_sg = system.season_reset(np.array([mu]), np.array([sigma]),
                                         np.array([played], dtype=np.int64), reset.keep,
                                         reset.widen)
    new_mu, new_sg = float(got_mu[0]), float(got_sg[0])
    d0 = float(system.display_rating(np.array([mu]), np.array([sigma]))[0])
    d1 = float(system.display_rating(np.array([mu_after]), np.array([sigma_after]))[0])
    shrink = [Term("mean", "prior", m, "mu"),
              Term("keep (mu - mean)", "reset", reset.keep * (mu - m), "mu")]
    var = sigma * sigma
    widened = sigma < s0
    spread = [Term("sigma^2", "prior", var, "sigma"),
              Term("widen (sigma_0^2 - sigma^2)", "reset",
                   reset.widen * (s0 * s0 - var) if widened else 0.0, "sigma")]
    eqs = [
        sum_equation("mu", "mu' = mu_0 + keep (mu - mu_0)", _REFERENCE, shrink,
                     target=new_mu),
        sum_equation("sigma", "sigma'^2 = sigma^2 + widen (sigma_0^2 - sigma^2) when "
                     "sigma < sigma_0, else sigma^2", _REFERENCE, spread,
                     target=new_sg * new_sg),
    ]
    notes = [
        f"the start of {start.name}: reset {reset.text} (keep {reset.keep!r}, widen "
        f"{reset.widen!r}) toward the newcomer prior N({m!r}, {s0!r}^2)",
        "the number of rounds played, the last contest's time and the highest rating stay",
    ]
    if (new_mu, new_sg) != (mu_after, sigma_after):
        notes.append(f"{type(system).__name__} resets to ({new_mu!r}, {new_sg!r}) by its own "
                     "rule; the stored values are given as after")
    return Explanation(
        system=system_name, contest=start.name, player=handle, place=(-1, -1),
        participants=participants, mu_before=mu, sigma_before=sigma, mu_after=mu_after,
        sigma_after=sigma_after, display_before=d0, display_after=d1, change=d1 - d0,
        performance=None, debut=False, equations=eqs, terms=[*shrink, *spread],
        quantities={"keep": reset.keep, "widen": reset.widen, "mu_0": m, "sigma_0": s0,
                    "rounds_before": float(played)},
        notes=notes)

