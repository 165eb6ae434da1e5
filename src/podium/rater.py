"""The Rater: one rating system plus the state of every player, fed contest by contest.

>>> from podium import Contest, Rater
>>> r = Rater("mmr")
>>> _ = r.add(Contest([("ann", 0, 0), ("bob", 1, 1)], name="round 1"))
>>> r.ratings()[["handle", "contests"]].to_dict("records")
[{'handle': 'ann', 'contests': 1}, {'handle': 'bob', 'contests': 1}]
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from podium.core.contest import Contest
from podium.core.state import ContestRecord, EventLog, PlayerTable
from podium.systems import SYSTEMS, RatingSystem, RoundInput, get_system

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Rater", "RoundReport", "rate"]

log = logging.getLogger("podium")


@dataclass(frozen=True)
class RoundReport:
    """What happened to one contest."""

    index: int
    name: str
    players: int
    new_players: int
    skipped: bool
    warnings: tuple[str, ...] = ()


class Rater:
    """Rate contests one after another with one system.

    Parameters
    ----------
    system:
        A system name from :data:`podium.systems.SYSTEMS` (``"mmr"``,
        ``"mmr-fast"``, ...) or a :class:`~podium.systems.RatingSystem` instance.
    **params:
        Hyper-parameters overriding the named system's preset.
    """

    def __init__(self, system: str | RatingSystem = "mmr", **params: Any) -> None:
        if isinstance(system, str):
            self.system_name = system
            self.system = get_system(system, **params)
        else:
            if params:
                raise TypeError("pass parameters either in the system object or as keywords")
            self.system_name = _name_of(system)
            self.system = system
        self.players = PlayerTable()
        self.state = self.system.make_state()
        self.events = EventLog()
        self.contests: list[ContestRecord] = []
        self.last_time: int | None = None

    # ------------------------------------------------------------------ rating
    @property
    def contests_processed(self) -> int:
        return len(self.contests)

    @property
    def num_players(self) -> int:
        return self.players.n

    def add(self, contest: Contest) -> RoundReport:
        """Rate one contest (validated by :class:`Contest`).

        A contest in which everybody tied carries no information: it changes
        nothing (no player is created) and the report says it was skipped.
        """
        if not isinstance(contest, Contest):
            raise TypeError(f"expected a Contest, got {type(contest).__name__}")
        index = len(self.contests)
        warnings: list[str] = []
        if self.last_time is not None and contest.time_seconds < self.last_time:
            warnings.append(
                f"contest {contest.label!r} (#{index}) has time_seconds={contest.time_seconds}, "
                f"earlier than the previous contest ({self.last_time}); rated in the given order "
                "with no time drift for its players"
            )
        if contest.is_outcome_free:
            self.contests.append(
                ContestRecord(contest.name, contest.time_seconds, contest.url, len(contest), True)
            )
            msg = f"contest {contest.label!r} (#{index}): everybody tied; nothing changed"
            log.info(msg)
            return RoundReport(index, contest.name, len(contest), 0, True, (*warnings, msg))

        table = self.players
        n_before = table.n
        mu0, sig0 = self.system.newcomer(contest)
        idx, n_new = table.lookup_or_add(contest.handles, mu0, sig0, contest.time_seconds)
        self.state.ensure_players(table.n)
        try:
            played = table.contests[idx].copy()
            delta = np.maximum(contest.time_seconds - table.last_time[idx], 0).astype(np.float64)
            delta[played == 0] = 0.0
            prior_mu = table.mu[idx].copy()
            prior_sig = table.sigma[idx].copy()
            rnd = RoundInput(
                contest=contest, players=idx, lo=contest.lo, hi=contest.hi,
                mu=prior_mu, sigma=prior_sig, played=played, delta_seconds=delta,
            )
            out = self.system.round_update(self.state, rnd)
        except Exception:
            table.truncate(n_before)
            raise
        display_old = self.system.display_rating(prior_mu, prior_sig)
        display_new = self.system.display_rating(out.mu, out.sigma)
        table.mu[idx] = out.mu
        table.sigma[idx] = out.sigma
        table.contests[idx] += 1
        table.last_time[idx] = np.maximum(table.last_time[idx], contest.time_seconds)
        table.max_display[idx] = np.maximum(table.max_display[idx], display_new)
        table.last_change[idx] = display_new - display_old
        self.events.append(index, idx, out.mu, out.sigma, out.perf, contest.lo)
        self.contests.append(
            ContestRecord(contest.name, contest.time_seconds, contest.url, len(contest), False)
        )
        self.last_time = (
            contest.time_seconds if self.last_time is None
            else max(self.last_time, contest.time_seconds)
        )
        warnings.extend(out.warnings)
        for w in warnings:
            log.warning(w)
        return RoundReport(index, contest.name, len(contest), n_new, False, tuple(warnings))

    def extend(
        self,
        contests: Iterable[Contest],
        *,
        progress: Callable[[RoundReport], None] | None = None,
    ) -> list[RoundReport]:
        """Rate contests in order; ``progress`` is called after each one."""
        reports = []
        for c in contests:
            rep = self.add(c)
            reports.append(rep)
            if progress is not None:
                progress(rep)
        return reports

    # ------------------------------------------------------------------ results
    def ratings(self, *, sort: bool = True) -> pd.DataFrame:
        """Current ratings: one row per player.

        Columns: ``handle, mu, sigma, display_rating, contests, last_contest_time,
        max_display_rating, last_change`` (floats unrounded).  Sorted by display
        rating, best first (ties by handle), unless ``sort=False``.
        """
        import pandas as pd

        t = self.players
        n = t.n
        mu = t.mu[:n]
        sigma = t.sigma[:n]
        df = pd.DataFrame(
            {
                "handle": pd.Series(t.handles, dtype=object),
                "mu": mu,
                "sigma": sigma,
                "display_rating": self.system.display_rating(mu, sigma),
                "contests": t.contests[:n],
                "last_contest_time": t.last_time[:n],
                "max_display_rating": t.max_display[:n],
                "last_change": t.last_change[:n],
            }
        )
        if sort:
            df = df.sort_values(["display_rating", "handle"], ascending=[False, True],
                                kind="stable").reset_index(drop=True)
        return df

    def events_frame(self) -> pd.DataFrame:
        """Every rating event: ``contest_index, handle, mu, sigma, perf, place`` (0-based)."""
        import pandas as pd

        ev = self.events.arrays()
        handles = np.asarray(self.players.handles, dtype=object)
        return pd.DataFrame(
            {
                "contest_index": ev["contest"],
                "handle": handles[ev["player"]] if ev["player"].size else [],
                "mu": ev["mu"],
                "sigma": ev["sigma"],
                "perf": ev["perf"],
                "place": ev["place"],
            }
        )

    def history(self, handle: str) -> pd.DataFrame:
        """One player's events: contest index, name and time, mu, sigma, display rating,
        performance and place (0-based ``lo`` of the player's tie range)."""
        import pandas as pd

        try:
            i = self.players.index[handle]
        except KeyError:
            raise KeyError(f"unknown player {handle!r}") from None
        ev = self.events.arrays()
        sel = np.flatnonzero(ev["player"] == i)
        contest = ev["contest"][sel]
        mu = ev["mu"][sel]
        sigma = ev["sigma"][sel]
        return pd.DataFrame(
            {
                "contest_index": contest,
                "contest_name": [self.contests[c].name for c in contest.tolist()],
                "time_seconds": [self.contests[c].time_seconds for c in contest.tolist()],
                "mu": mu,
                "sigma": sigma,
                "display_rating": self.system.display_rating(mu, sigma),
                "perf": ev["perf"][sel],
                "place": ev["place"][sel],
            }
        )

    def rating(self, handle: str) -> tuple[float, float]:
        """``(mu, sigma)`` of one player."""
        try:
            i = self.players.index[handle]
        except KeyError:
            raise KeyError(f"unknown player {handle!r}") from None
        return float(self.players.mu[i]), float(self.players.sigma[i])

    # ------------------------------------------------------------------ persistence
    def save(self, path: str) -> None:
        """Write a versioned checkpoint atomically (see :mod:`podium.checkpoint`)."""
        from podium.checkpoint import save_checkpoint

        save_checkpoint(self, path)

    @classmethod
    def load(cls, path: str) -> Rater:
        """Resume from a checkpoint written by :meth:`save`."""
        from podium.checkpoint import load_checkpoint

        return load_checkpoint(path)


def _name_of(system: RatingSystem) -> str:
    for name, (cls, preset, _) in SYSTEMS.items():
        if type(system) is cls and all(
            getattr(system, k) == v or (v != v and getattr(system, k) != getattr(system, k))
            for k, v in preset.items()
        ):
            if type(system).name == name or preset:
                return name
    return type(system).name


def rate(contests: Iterable[Contest], system: str | RatingSystem = "mmr", **params: Any) -> Rater:
    """Rate ``contests`` in order and return the :class:`Rater` (ratings, histories)."""
    r = Rater(system, **params)
    r.extend(contests)
    return r

