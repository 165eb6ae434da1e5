"""The HistoryRater: a whole-history system (``ttt``, ``whr``, ``mmr-smooth``) behind
the Rater's interface (``add``, ``extend``, ``ratings``, ``history``, ``save``/``load``).

A filter rates each contest once; a whole-history system re-estimates every past
rating when a contest is added.  The HistoryRater keeps the history as arrays
(:class:`~podium.history.data.LabelledHistory`) and, after each ``add`` or ``extend``,
the latest fit: :attr:`players` holds each player's last smoothed rating and
:attr:`events` the smoothed learning curve (one event per player and contest), so
that :func:`podium.io.results.write_results` writes them as it writes a Rater's.

>>> from podium import Contest
>>> from podium.history_rater import HistoryRater
>>> r = HistoryRater("ttt")
>>> _ = r.add(Contest([("ann", 0, 0), ("bob", 1, 1)], name="g1", time_seconds=0))
>>> rep = r.add(Contest([("bob", 0, 0), ("cy", 1, 1)], name="g2", time_seconds=86400))
>>> rep.max_past_change > 0  # the second game revised bob's first rating
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from podium.core.contest import Contest
from podium.core.records import ContestLog
from podium.core.state import EventLog, PlayerTable
from podium.errors import CheckpointError, ConfigError, ContestError
from podium.history.data import ContestHistory, LabelledHistory, append_contests
from podium.history.engines import (
    HistoryFit,
    WholeHistorySystem,
    get_history_system,
    is_history_system,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["HistoryRater", "HistoryReport", "make_rater", "load_rater"]

#: The history's arrays in an image (``history.*``).
_HISTORY_FIELDS = ContestHistory._fields[:-1]


class HistoryReport(NamedTuple):
    """What adding one contest did (the fields of
    :class:`~podium.core.records.RoundReport`, then the whole-history update's).

    Attributes
    ----------
    index, name, players, new_players, skipped, warnings:
        As :class:`~podium.core.records.RoundReport`.
    sweeps:
        Sweeps of the update (at most ``update_sweeps`` when contests are added to a
        fitted history by the bounded update: ``mmr-smooth`` any number, ``ttt`` up to
        ``TTT_UPDATE_CONTESTS``, ``whr`` one; else the full solve's, for ``whr``
        started from the previous fit).
    settled:
        Whether the update reached its tolerance within its sweeps.
    touched:
        Players whose ratings were recomputed.
    max_past_change:
        The largest change of a smoothed rating of an earlier contest (display
        scale): how much the new result revised the past.
    """

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    name: str
    players: int
    new_players: int
    skipped: bool
    warnings: tuple[str, ...]
    sweeps: int
    settled: bool
    touched: int
    max_past_change: float


class HistoryRater:
    """Rate contests with a whole-history system.

    Parameters
    ----------
    system:
        ``"ttt"``, ``"whr"`` or ``"mmr-smooth"`` (see
        :data:`~podium.history.engines.HISTORY_SYSTEMS`).
    **params:
        Parameters overriding the system's defaults.
    """

    def __init__(self, system: str, **params: Any) -> None:
        self.system_name = system
        self.system: WholeHistorySystem = get_history_system(system, **params)
        self.players = PlayerTable()
        self.events = EventLog()
        self.contests = ContestLog()
        self.last_time: int | None = None
        self.labelled: LabelledHistory | None = None
        self.contest_weight = np.zeros(0)
        self.perf_ceiling = np.zeros(0)
        self.fit: HistoryFit | None = None

    @property
    def contests_processed(self) -> int:
        return len(self.contests)

    @property
    def num_players(self) -> int:
        return self.players.n

    # ------------------------------------------------------------------ rating
    def add(self, contest: Contest) -> HistoryReport:
        """Add one contest and re-smooth only what it touches, at most
        ``update_sweeps`` sweeps; the report says how much past ratings changed."""
        return self.extend([contest])[0]

    def extend(self, contests: Iterable[Contest], *,
               progress: Callable[[HistoryReport], None] | None = None
               ) -> list[HistoryReport]:
        """Add contests in order and re-smooth once (one report per contest, each with
        the update's figures), going on from the previous fit where the system can
        (:meth:`~podium.history.engines.WholeHistorySystem.fit`).  On an error nothing
        is added.

        Raises
        ------
        TypeError
            For an item that is not a :class:`Contest`.
        ContestError
            For contests out of time order (naming the contest), or that the system
            refuses (``ttt``: a tie with ``p_draw`` 0).
        """
        new = list(contests)
        for c in new:
            if not isinstance(c, Contest):
                raise TypeError(f"expected a Contest, got {type(c).__name__}")
        if not new:
            return []
        first = len(self.contests)
        labelled = append_contests(self.labelled, new, first)
        weight = np.r_[self.contest_weight, [c.weight for c in new
                                             if c.n_teams > 1]].astype(np.float64)
        ceiling = np.r_[self.perf_ceiling, [np.inf if c.perf_ceiling is None
                                            else c.perf_ceiling for c in new
                                            if c.n_teams > 1]].astype(np.float64)
        try:
            fit = self.system.fit(labelled.history, contest_weight=weight,
                                  perf_ceiling=ceiling, previous=self.fit)
        except ContestError as exc:
            raise self._named(exc, labelled, new, first) from None
        n_before = self.players.n
        self.labelled, self.contest_weight, self.perf_ceiling, self.fit = (
            labelled, weight, ceiling, fit)
        for c in new:
            self.contests.add(c.name, c.time_seconds, c.url, len(c), False)
        self._publish()
        known = set(self.players.handles[:n_before])
        reports = []
        for k, c in enumerate(new):
            index = first + k
            rated = self._rated(index)
            self.contests.skipped[index] = not rated
            fresh = len({h for h in c.handles if h not in known})
            known.update(c.handles)
            rep = HistoryReport(index, c.name, len(c), fresh if rated else 0, not rated, (),
                                fit.sweeps, fit.converged, fit.players,
                                fit.max_past_change)
            reports.append(rep)
            if progress is not None:
                progress(rep)
        return reports

    def _named(self, exc: ContestError, labelled: LabelledHistory, new: list[Contest],
               first: int) -> ContestError:
        """``exc`` naming the contest by its name (the engines number the contests of
        the history: ``#k``), with the option that gets past a refused tie."""
        name = exc.contest
        if name is not None and name.startswith("#") and name[1:].isdigit():
            k = int(labelled.contest_index[int(name[1:])])
            name = new[k - first].label if k >= first else self.contests.names[k]
        reason = exc.reason
        if "p_draw" in reason:
            reason += " (--set p_draw=0.1 on the command line)"
        return ContestError(reason, contest=name, player=exc.player, team=exc.team)

    def _rated(self, index: int) -> bool:
        """Whether the contest at ``index`` has smoothed ratings."""
        assert self.labelled is not None and self.fit is not None
        where = np.flatnonzero(self.labelled.contest_index == index)
        if where.size == 0:
            return False
        r0 = int(self.labelled.history.contest_rows[where[0]])
        return bool(np.isfinite(self.fit.mu[r0]))

    def _publish(self) -> None:
        """The player table and the event log from the latest fit: every rated row an
        event, each player's last smoothed rating its current one."""
        assert self.labelled is not None and self.fit is not None
        h = self.labelled.history
        fit = self.fit
        ok = np.flatnonzero(np.isfinite(fit.mu))
        contest = self.labelled.contest_index[h.row_contest[ok]]
        player = h.player[ok]
        mu, sigma = fit.mu[ok], fit.sigma[ok]
        place = h.team_place[h.row_team[ok]]
        events = EventLog()
        events.append_rounds(contest, player.astype(np.int32), mu, sigma, fit.perf[ok],
                             place.astype(np.int32))
        self.events = events
        n = h.n_players
        display = self.system.display_rating(mu, sigma)
        counts = np.bincount(player, minlength=n)
        last = np.full(n, -1, dtype=np.int64)
        last[player] = np.arange(ok.size)  # rows are in contest order: the last wins
        prev = np.full(n, -1, dtype=np.int64)
        has_prev = counts >= 2
        order = np.argsort(player, kind="stable")
        ends = np.cumsum(counts)
        prev[has_prev] = order[ends[has_prev] - 2]
        max_display = np.full(n, -np.inf)
        np.maximum.at(max_display, player, display)
        times = np.asarray(self.contests.times, dtype=np.int64)
        played = last >= 0
        newcomer = self.system.newcomer_mu()
        change = np.where(prev >= 0, display[last] - display[np.maximum(prev, 0)],
                          display[last] - newcomer)
        table_arrays: dict[str, np.ndarray] = {
            "handles": np.array(self.labelled.handles, dtype=object),
            "mu": np.where(played, mu[last], np.nan),
            "sigma": np.where(played, sigma[last], np.nan),
            "contests": counts.astype(np.int64),
            "last_time": np.where(played, times[contest[last]], 0).astype(np.int64),
            "max_display": max_display,
            "last_change": np.where(played, change, 0.0),
        }
        self.players = PlayerTable.from_arrays(table_arrays)
        self.last_time = int(times.max()) if times.size else None

    # ------------------------------------------------------------------ results
    def ratings(self, *, sort: bool = True) -> pd.DataFrame:
        """Each player's last smoothed rating, as :meth:`podium.rater.Rater.ratings`."""
        import pandas as pd

        t = self.players
        n = t.n
        df = pd.DataFrame({
            "handle": pd.Series(t.handles, dtype=object),
            "mu": t.mu[:n], "sigma": t.sigma[:n],
            "display_rating": self.system.display_rating(t.mu[:n], t.sigma[:n]),
            "contests": t.contests[:n], "last_contest_time": t.last_time[:n],
            "max_display_rating": t.max_display[:n], "last_change": t.last_change[:n],
        })
        if sort:
            df = df.sort_values(["display_rating", "handle"], ascending=[False, True],
                                kind="stable").reset_index(drop=True)
        return df

    def history(self, handle: str) -> pd.DataFrame:
        """One player's smoothed learning curve: contest index, name and time, mu,
        sigma, display rating, performance, place."""
        import pandas as pd

        try:
            i = self.players.index[handle]
        except KeyError:
            raise KeyError(f"unknown player {handle!r}") from None
        ev = self.events.arrays()
        sel = np.flatnonzero(ev["player"] == i)
        contest = ev["contest"][sel].tolist()
        mu, sigma = ev["mu"][sel], ev["sigma"][sel]
        return pd.DataFrame({
            "contest_index": ev["contest"][sel],
            "contest_name": [self.contests.names[c] for c in contest],
            "time_seconds": [self.contests.times[c] for c in contest],
            "mu": mu, "sigma": sigma,
            "display_rating": self.system.display_rating(mu, sigma),
            "perf": ev["perf"][sel], "place": ev["place"][sel],
        })

    def rating(self, handle: str) -> tuple[float, float]:
        """``(mu, sigma)`` of one player: its last smoothed rating."""
        try:
            i = self.players.index[handle]
        except KeyError:
            raise KeyError(f"unknown player {handle!r}") from None
        return float(self.players.mu[i]), float(self.players.sigma[i])

    # ------------------------------------------------------------------ persistence
    def to_arrays(self, *, header: Mapping[str, Any] | None = None
                  ) -> dict[str, np.ndarray]:
        """Everything needed to resume, as named arrays: ``meta`` (JSON: the header,
        ``"whole_history": true``, the system and parameters, the contests' records),
        ``handles``, the history (``history.*``, with ``contest_index``, the contests'
        weights and ceilings), the latest fit (``fit.*``) and, for ``mmr-smooth``, its
        state (``state.*``, :meth:`~podium.history.smooth_state.SmoothState.to_arrays`),
        for ``ttt`` and ``whr`` the messages or ratings the next ``add`` goes on from
        (``warm.*``).
        """
        meta = {
            **(header or {}),
            "whole_history": True,
            "system": self.system_name,
            "params": self.system.params(),
            "contests": [list(c) for c in self.contests],
        }
        out: dict[str, np.ndarray] = {"meta": _json_bytes(meta)}
        if self.labelled is None or self.fit is None:
            return out
        out["handles"] = _json_bytes(self.labelled.handles)
        h = self.labelled.history
        for name in _HISTORY_FIELDS:
            out[f"history.{name}"] = getattr(h, name)
        out["history.contest_index"] = self.labelled.contest_index
        out["history.contest_weight"] = self.contest_weight
        out["history.perf_ceiling"] = self.perf_ceiling
        fit = self.fit
        out["fit.rows"] = np.stack([fit.mu, fit.sigma, fit.perf])
        out["fit.figures"] = np.array([fit.sweeps, fit.converged, fit.players,
                                       fit.max_past_change], dtype=np.float64)
        if fit.state is not None:
            for k, v in fit.state.to_arrays().items():
                out[f"state.{k}"] = v
        for k, v in (fit.warm or {}).items():
            out[f"warm.{k}"] = v
        return out

    @classmethod
    def from_arrays(cls, data: Mapping[str, np.ndarray], *, where: str = "<arrays>",
                    what: str = "checkpoint") -> HistoryRater:
        """Rebuild a HistoryRater from :meth:`to_arrays` output.

        Raises
        ------
        CheckpointError
            Naming ``where`` when an entry is missing or inconsistent, or the system or
            a parameter is unknown.
        """
        try:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            system, params = meta["system"], meta["params"]
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{where}: {what} has no readable metadata ({exc})") from None
        try:
            rater = cls(system, **params)
        except ConfigError as exc:
            raise CheckpointError(f"{where}: {exc}") from None
        try:
            rater.contests = ContestLog(meta["contests"])
            if "handles" not in data:
                return rater
            handles = json.loads(bytes(data["handles"]).decode("utf-8"))
            arr = {n: np.asarray(data[f"history.{n}"]) for n in _HISTORY_FIELDS}
            h = ContestHistory(arr["contest_teams"], arr["team_rows"], arr["team_place"],
                               arr["player"], arr["weight"], arr["time"], len(handles))
            rater.labelled = LabelledHistory(h, handles,
                                             np.asarray(data["history.contest_index"]))
            rater.contest_weight = np.asarray(data["history.contest_weight"])
            rater.perf_ceiling = np.asarray(data["history.perf_ceiling"])
            rows = np.asarray(data["fit.rows"])
            sweeps, converged, players, change = np.asarray(data["fit.figures"]).tolist()
            state = None
            state_arrays = {k.split(".", 1)[1]: np.asarray(v) for k, v in data.items()
                            if k.startswith("state.")}
            if state_arrays:
                from podium.history.smooth_state import SmoothState

                smooth = rater.system
                state = SmoothState.start(h, smooth.mmr_params(),  # type: ignore[attr-defined]
                                          rater.contest_weight, rater.perf_ceiling,
                                          float(smooth.params()["window_tol"]))
                state.restore(state_arrays)
            warm = {k.split(".", 1)[1]: np.asarray(v) for k, v in data.items()
                    if k.startswith("warm.")}
            rater.fit = HistoryFit(rows[0], rows[1], rows[2], int(sweeps), bool(converged),
                                   int(players), float(change), state, warm or None)
            rater._publish()
            for k in range(len(rater.contests)):
                rater.contests.skipped[k] = not rater._rated(k)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise CheckpointError(f"{where}: {what} is damaged or inconsistent ({exc})") from None
        return rater

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a versioned checkpoint atomically (see :mod:`podium.checkpoint`)."""
        from podium.checkpoint import checkpoint_header, write_checkpoint

        write_checkpoint(self.to_arrays(header=checkpoint_header()), path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> HistoryRater:
        """Resume from a checkpoint written by :meth:`save`."""
        from podium.checkpoint import read_checkpoint

        return cls.from_arrays(read_checkpoint(path), where=os.fspath(path))


def _json_bytes(obj: Any) -> npt.NDArray[np.uint8]:
    return np.frombuffer(json.dumps(obj, allow_nan=True).encode("utf-8"), dtype=np.uint8)


def make_rater(system: str, **params: Any) -> Any:
    """A :class:`~podium.rater.Rater` for a filter, a :class:`HistoryRater` for a
    whole-history system (``ttt``, ``whr``, ``mmr-smooth``)."""
    if is_history_system(system):
        return HistoryRater(system, **params)
    from podium.rater import Rater

    return Rater(system, **params)


def load_rater(path: str | os.PathLike[str]) -> Any:
    """The Rater or HistoryRater a checkpoint holds."""
    from podium.checkpoint import read_checkpoint

    data = read_checkpoint(path)
    try:
        whole = bool(json.loads(bytes(data["meta"]).decode("utf-8")).get("whole_history"))
    except (KeyError, TypeError, ValueError, AttributeError):
        whole = False
    if whole:
        return HistoryRater.from_arrays(data, where=os.fspath(path))
    from podium.rater import Rater

    return Rater.from_arrays(data, where=os.fspath(path), what="checkpoint")
