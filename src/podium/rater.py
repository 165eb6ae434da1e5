"""The Rater: one rating system plus the state of every player, fed contest by contest.

>>> from podium import Contest, Rater
>>> r = Rater("mmr")
>>> _ = r.add(Contest([("ann", 0, 0), ("bob", 1, 1)], name="round 1"))
>>> r.ratings()[["handle", "contests"]].to_dict("records")
[{'handle': 'ann', 'contests': 1}, {'handle': 'bob', 'contests': 1}]
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from podium._add import add_small_round, early_warning
from podium.core.contest import Contest, HandlePool
from podium.core.contest_batch import BatchRun, batch_run
from podium.core.records import ContestLog, RoundReport, RoundReports
from podium.core.state import EventLog, PlayerTable
from podium.errors import CheckpointError, ConfigError, ContestError
from podium.systems import SYSTEMS, RatingSystem, get_system
from podium.systems import saved_params as _saved_params
from podium.systems.base import RoundBatch, RoundsOutput

if TYPE_CHECKING:
    import pandas as pd

    from podium.core.explain import Explanation

__all__ = ["Rater", "RoundReport", "rate"]

log = logging.getLogger("podium")

#: :meth:`Rater.extend` hands the system batches of at most this many contests ...
_BATCH_CONTESTS = 4096
#: ... or of about this many player-rounds (a large contest is a batch of its own).
_BATCH_EVENTS = 1 << 16
_NO_PLAYERS = np.zeros(0, dtype=np.int64)
_NAN = float("nan")
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


class Rater:
    """Rate contests one after another with one system.

    Parameters
    ----------
    system:
        A system name from :data:`podium.systems.SYSTEMS` (``"mmr"``,
        ``"mmr-fast"``, ...) or a :class:`~podium.systems.RatingSystem` instance.
    events:
        The event sink: where :meth:`add` records each round's events (default: a new
        :class:`~podium.core.state.EventLog`, which keeps them all).  A sink that keeps
        less (the store's :class:`~podium.store.snapshot.RunEventLog`) is passed here.
    **params:
        Hyper-parameters overriding the named system's preset.
    """

    def __init__(
        self, system: str | RatingSystem = "mmr", *, events: EventLog | None = None,
        **params: Any,
    ) -> None:
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
        self.events: EventLog = EventLog() if events is None else events
        self.contests = ContestLog()
        self.last_time: int | None = None
        # add's path for one small round (the system's rate_small_round), when the
        # system has one and its newcomer prior is the same for every contest
        small = getattr(self.system, "rate_small_round", None)
        same_prior = type(self.system).newcomer is RatingSystem.newcomer
        self._small: Callable[..., Any] | None = small if same_prior else None
        self._prior = self.system.newcomer(None) if small is not None and same_prior else None

    # ------------------------------------------------------------------ rating
    @property
    def contests_processed(self) -> int:
        return len(self.contests)

    @property
    def num_players(self) -> int:
        return self.players.n

    def add(self, contest: Contest) -> RoundReport:
        """Rate one contest (validated by :class:`Contest`).

        A contest in which every side tied (a draw) is rated as the system reads a
        draw, unless the system's ``all_tied`` is ``"skip"``; a contest of fewer than
        two sides has no result.  A contest left unrated changes nothing (no player
        is created) and the report says it was skipped
        (:meth:`~podium.systems.RatingSystem.skips_round`).
        """
        if not isinstance(contest, Contest):
            raise TypeError(f"expected a Contest, got {type(contest).__name__}")
        if self._small is not None and (done := add_small_round(self, contest)) is not None:
            index, n, n_new, warnings = done
            return RoundReport(index, contest.name, n, n_new, False, warnings)
        reports, error = self._rate_many([contest])
        if error is not None:
            raise error
        return reports[0]

    def extend(
        self,
        contests: Iterable[Contest],
        *,
        progress: Callable[[RoundReport], None] | None = None,
    ) -> RoundReports:
        """Rate contests in order; ``progress`` is called after each one.

        The contests are rated in batches (the system's
        :meth:`~podium.systems.RatingSystem.rate_rounds`, which for Elo-MMR and
        TrueSkill loops over small rounds in compiled code); the result is the
        same, bit for bit, as :meth:`add` for each contest in turn.  When a
        contest fails (it is not a :class:`Contest`, the iterable raises, or the
        system raises on it), the contests before it stay rated, ``progress``
        has been called for each of them, and the Rater is exactly as it was
        before the failing contest.  ``progress`` is called once a batch is
        rated, for each of its contests in order.

        Returns the reports as a :class:`~podium.core.records.RoundReports`: a
        sequence of :class:`RoundReport` (indexing, iteration, ``len``) kept as columns,
        so that a history of millions of rounds costs no object per round.
        """
        reports = RoundReports()
        it = iter(contests)
        while True:
            chunk: list[Contest] = []
            events = 0
            error: BaseException | None = None
            try:
                for c in it:
                    if not isinstance(c, Contest):
                        raise TypeError(f"expected a Contest, got {type(c).__name__}")
                    chunk.append(c)
                    events += len(c)
                    if len(chunk) >= _BATCH_CONTESTS or events >= _BATCH_EVENTS:
                        break
            except BaseException as exc:  # noqa: BLE001 - raised once the chunk is rated
                error = exc
            done, failed = self._rate_many(chunk) if chunk else (RoundReports(), None)
            reports.extend(done)
            if progress is not None:
                for rep in done:
                    progress(rep)
            if failed is not None:
                raise failed
            if error is not None:
                raise error
            if not chunk:
                return reports

    def _rate_many(
        self, contests: list[Contest]
    ) -> tuple[RoundReports, BaseException | None]:
        """Rate ``contests`` (validated) as one batch.

        Returns the reports of the contests rated and, when one failed, its
        exception: the Rater is then as it was before that contest (which is not
        raised here so that the callers can first report the others).
        """
        table = self.players
        system = self.system
        first = len(self.contests)
        n_before = table.n
        rated: list[Contest] = []
        rated_pos: list[int] = []
        priors: list[tuple[float, float]] = []  # per rated contest, unless same_prior
        early: dict[int, str] = {}  # out-of-order warnings by position
        last_time = self.last_time
        error: BaseException | None = None
        n_ok = len(contests)
        # the base class's newcomer prior is the same for every contest
        same_prior = type(system).newcomer is RatingSystem.newcomer
        skips = system.skips_round
        prior: tuple[float, float] | None = None
        # ---- which contests are rated, their priors, out-of-order warnings
        for pos, contest in enumerate(contests):
            t = contest.time_seconds
            if last_time is not None and t < last_time:
                early[pos] = early_warning(contest, first + pos, last_time)
            if skips(contest):
                continue
            if not _INT64_MIN <= t <= _INT64_MAX:
                error = ContestError(
                    f"time_seconds={t} is outside the 64-bit range of a rated contest",
                    contest=contest.label,
                )
                n_ok = pos
                break
            if prior is None:
                try:
                    mu0, sig0 = system.newcomer(contest)
                except BaseException as exc:  # noqa: BLE001 - raised once the others are rated
                    error = exc
                    n_ok = pos
                    break
                if same_prior:  # the prior does not depend on the contest: ask once
                    prior = (mu0, sig0)
                else:
                    priors.append((mu0, sig0))
            rated.append(contest)
            rated_pos.append(pos)
            last_time = t if last_time is None or t > last_time else last_time
        # ---- the players of the rated contests, looked up in one pass; newcomers get
        # the indices after the known players, in order of first appearance
        n_rounds = len(rated)
        new_counts = [0] * n_rounds
        fresh: dict[str, int] = {}
        new_handles: list[str] = []
        unknown: list[int]
        owner: Iterable[int]
        pool: HandlePool | None = None
        codes: npt.NDArray[np.int64] | None = None
        run: BatchRun | None = None
        if n_rounds == 1 and rated[0].handle_codes is None:
            # Rater.add: for one small round, lists cost less than NumPy calls (a loaded
            # contest's players are found by their handle numbers, below).  A contest's
            # handles are distinct, so its newcomers are numbered in order, no lookup
            # of one another needed; in a first round every player is one.
            hs = rated[0].handles
            offsets = [0, len(hs)]
            offsets_arr = np.array(offsets, dtype=np.int64)
            if n_before == 0:
                players = np.arange(len(hs), dtype=np.int64)
                new_handles = list(hs)
            else:
                looked_up = list(map(table.index.get, hs, repeat(-1)))
                players = np.array(looked_up, dtype=np.int64)
                if -1 in looked_up:
                    where = np.flatnonzero(players < 0)
                    players[where] = np.arange(n_before, n_before + where.size)
                    new_handles = list(map(hs.__getitem__, where.tolist()))
            new_counts[0] = len(new_handles)
            unknown = []
            owner = ()
        else:
            run = batch_run(rated)
            if run is not None:  # a loader's columns, read as arrays
                offsets_arr = run.offsets
                pool, codes = run.pool, run.codes
                players = table.code_map(pool)[codes]
            else:
                offsets_arr = np.zeros(n_rounds + 1, dtype=np.int64)
                np.cumsum([len(c) for c in rated], out=offsets_arr[1:])
                players, pool, codes = table.lookup_rounds(rated, offsets_arr.tolist())
            offsets = offsets_arr.tolist()
            where = np.flatnonzero(players < 0)
            if (pool is not None and codes is not None and where.size
                    and table.knows_all_by_code(pool) and bool((codes >= 0).all())):
                # every unknown code is a newcomer's: numbered in NumPy
                new_handles, new_counts = table.number_newcomers(
                    pool, codes, players, where, offsets_arr)
                where = where[:0]
            unknown = where.tolist()
            owner = (np.searchsorted(offsets_arr, where, side="right") - 1).tolist()
        pool_names = pool.names if pool is not None else []
        index_get = table.index.get if unknown and pool is not None else None
        for k, r in zip(unknown, owner, strict=True):  # a Python loop over the newcomers only
            h = (pool_names[codes[k]] if codes is not None and codes[k] >= 0
                 else rated[r].handles[k - offsets[r]])
            j = fresh.get(h)
            if j is None:
                j = -1 if index_get is None else index_get(h, -1)  # known, not by its code
                if j < 0:
                    j = n_before + len(new_handles)
                    new_handles.append(h)
                    new_counts[r] += 1
                fresh[h] = j
            players[k] = j
        if pool is not None and codes is not None and unknown:
            by_code = where[codes[where] >= 0]
            table.remember_codes(pool, codes[by_code], players[by_code])
        players_after = list(accumulate(new_counts, initial=n_before))[1:]
        new_rows = [  # (mu, sigma, time, count) of the contests with debuts
            (*(prior if prior is not None else priors[r]), rated[r].time_seconds, n_new)
            for r, n_new in enumerate(new_counts) if n_new
        ]
        # ---- newcomers get their rows, then the system rates the batch
        if new_handles:
            self._add_newcomers(new_handles, new_rows)
        out: RoundsOutput | None = None
        lo_all = _NO_PLAYERS
        if rated:
            if run is not None:
                lo_all, times, weight, ceiling = (run.lo, run.time_seconds, run.weight,
                                                  run.perf_ceiling)
                team_round = np.zeros(n_rounds, dtype=bool)
            else:
                lo_all = (rated[0].lo if len(rated) == 1
                          else np.concatenate([c.lo for c in rated]))
                times = np.array([c.time_seconds for c in rated], dtype=np.int64)
                weight = np.array([c.weight for c in rated], dtype=np.float64)
                ceiling = np.array([_NAN if (x := c.perf_ceiling) is None else x
                                    for c in rated], dtype=np.float64)
                team_round = np.array([c.team_round for c in rated], dtype=bool)
            batch = RoundBatch(
                contests=rated, offsets=offsets_arr, players=players, lo=lo_all,
                time_seconds=times, weight=weight, perf_ceiling=ceiling, team_round=team_round,
                players_after=players_after,
                first_index=first,
                mu=table.mu, sigma=table.sigma, played=table.contests,
                last_time=table.last_time, max_display=table.max_display,
                last_change=table.last_change,
            )
            out = system.rate_rounds(self.state, batch)
            if out.error is not None:
                done = out.done
                error = out.error
                if done < len(rated_pos):  # else every round was rated before it failed
                    n_ok = rated_pos[done]
                kept = players_after[done - 1] if done else n_before
                table.truncate(kept)
                self.state.truncate_players(kept)
        # ---- records, events and reports, contest by contest
        reports = RoundReports()
        events = self.events
        records = self.contests
        last_time = self.last_time
        if out is not None:
            mu_ev, sig_ev, perf_ev = out.events
            round_warnings = out.warnings
        n_rated = 0
        while n_rated < len(rated_pos) and rated_pos[n_rated] < n_ok:
            n_rated += 1
        if n_rated == 1:
            m = offsets[1]
            events.append(first + rated_pos[0], players[:m], mu_ev[:m], sig_ev[:m], perf_ev[:m],
                          rated[0].lo, rated[0].team_names)
        elif n_rated:  # one chunk of events for the rated rounds of the batch
            m = offsets[n_rated]
            teams: list[str | None] | None = None
            if any(c.teams is not None for c in rated[:n_rated]):
                teams = []
                for c in rated[:n_rated]:
                    names = c.team_names
                    teams.extend([None] * len(c) if names is None else names)
            events.append_rounds(
                np.repeat(np.array(rated_pos[:n_rated], dtype=np.int64) + first,
                          np.diff(offsets_arr[: n_rated + 1])),
                players[:m], mu_ev[:m], sig_ev[:m], perf_ev[:m],
                lo_all[:m], teams)
        rated_pos.append(-1)
        r = 0
        for pos in range(n_ok):
            contest = contests[pos]
            index = first + pos
            t = contest.time_seconds
            if rated_pos[r] == pos:
                a = offsets[r]
                b = offsets[r + 1]
                records.add(contest.name, t, contest.url, b - a, False)
                if last_time is None or t > last_time:
                    last_time = t
                warnings = round_warnings[r]
                if pos in early:
                    warnings = (early[pos], *warnings)
                for w in warnings:
                    log.warning(w)
                reports.add(index, contest.name, b - a, new_counts[r], False, warnings)
                r += 1
            else:
                records.add(contest.name, t, contest.url, len(contest), True)
                msg = (f"contest {contest.label!r} (#{index}): "
                       f"{system.skip_reason(contest)}; nothing changed")
                if pos in early:
                    log.warning(early[pos])
                log.info(msg)
                reports.add(index, contest.name, len(contest), 0, True,
                            (early[pos], msg) if pos in early else (msg,))
        self.last_time = last_time
        return reports, error

    def _add_newcomers(
        self, handles: list[str], rows: list[tuple[float, float, int, int]]
    ) -> None:
        """Give ``handles`` rows: ``rows`` lists, contest by contest, the newcomer prior,
        the contest's time and how many of ``handles`` (in order) debut there."""
        table = self.players
        start = table.n
        mu0, sig0, t, _ = rows[0]
        table.add_players(handles, mu0, sig0, t)
        if len(rows) > 1:
            counts = [row[3] for row in rows]
            table.mu[start:table.n] = np.repeat([row[0] for row in rows], counts)
            table.sigma[start:table.n] = np.repeat([row[1] for row in rows], counts)
            table.last_time[start:table.n] = np.repeat(
                np.array([row[2] for row in rows], dtype=np.int64), counts)

    # ------------------------------------------------------------------ explanations
    def explain(self, contest: Contest, handle: str) -> Explanation:
        """Why ``handle``'s rating changes as it does when ``contest`` is rated next.

        The Rater must be just before the contest (every earlier contest rated, not this
        one); it is left unchanged.  The round is set up as :meth:`add` sets it up (a
        newcomer enters with the system's prior) and the system explains it
        (:meth:`~podium.systems.RatingSystem.explain`): ``mu_after`` and ``sigma_after``
        are what :meth:`add` would give the player, bit for bit.

        Raises
        ------
        ExplainError
            When ``handle`` is not in the contest, or the contest is not rated
            (:meth:`~podium.systems.RatingSystem.skips_round`: fewer than two sides, or
            everybody tied with ``all_tied="skip"``).
        """
        from podium.core.explain import ExplainError
        from podium.systems.base import RoundInput

        if not isinstance(contest, Contest):
            raise TypeError(f"expected a Contest, got {type(contest).__name__}")
        handles = contest.handles
        try:
            k = handles.index(handle)
        except ValueError:
            raise ExplainError(f"player {handle!r} is not in contest {contest.label!r}") from None
        if self.system.skips_round(contest):
            raise ExplainError(f"contest {contest.label!r} is not rated "
                               f"({self.system.skip_reason(contest)}): nothing changed")
        table = self.players
        n = table.n
        mu0, sig0 = self.system.newcomer(contest)
        idx = np.empty(len(handles), dtype=np.int64)
        fresh = n
        for j, h in enumerate(handles):
            i = table.index.get(h, -1)
            if i < 0:
                i, fresh = fresh, fresh + 1
            idx[j] = i
        old = idx < n
        known = idx[old]
        mu = np.full(idx.size, mu0)
        sigma = np.full(idx.size, sig0)
        played = np.zeros(idx.size, dtype=np.int64)
        last = np.full(idx.size, contest.time_seconds, dtype=np.int64)
        mu[old], sigma[old] = table.mu[known], table.sigma[known]
        played[old], last[old] = table.contests[known], table.last_time[known]
        delta = np.maximum(contest.time_seconds - last, 0).astype(np.float64)
        delta[played == 0] = 0.0
        teams = contest.teams if contest.team_round else None
        if teams is not None and self.system.team_rule is None:
            raise ContestError(f"system {self.system.name!r} does not rate team rounds",
                               contest=contest.label)
        rnd = RoundInput(
            contest=contest, players=idx, lo=contest.lo, hi=contest.hi, mu=mu, sigma=sigma,
            played=played, delta_seconds=delta,
            team_offsets=None if teams is None else teams.offsets,
            weight=None if teams is None else teams.weight,
        )
        # the system explains from copies of the state (RatingSystem.explain leaves it
        # unchanged), made room for the newcomers, whose indices follow the players'
        return self.system.explain(self.state, rnd, k)

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
        """Every rating event: ``contest_index, handle, mu, sigma, perf, place`` (0-based
        place of the player, or of its team in a team contest) and ``team`` (``None``
        outside team contests)."""
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
                "team": self._team_column(ev["team"]),
            }
        )

    def _team_column(self, team: np.ndarray) -> np.ndarray:
        """Team indices of events as names (``None`` for -1)."""
        names = np.array([*self.events.team_names, None], dtype=object)
        return names[np.where(team < 0, len(names) - 1, team)]

    def history(self, handle: str) -> pd.DataFrame:
        """One player's events: contest index, name and time, mu, sigma, display rating,
        performance, place (0-based ``lo`` of the player's tie range, or of its team's
        in a team contest) and team (``None`` outside team contests)."""
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
                "team": self._team_column(ev["team"][sel]),
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
    def to_arrays(
        self, *, events: bool = True, header: Mapping[str, Any] | None = None
    ) -> dict[str, np.ndarray]:
        """Everything needed to resume, as named arrays (no pickle).

        ``meta``: UTF-8 JSON of ``header``'s items (a file format's name and version,
        written first), then the system's name and parameters, the latest contest time
        and the processed contests' records; ``handles``: UTF-8 JSON list; the player
        table as ``table.*``, the system's state (``SystemState.to_arrays``, which may
        compact the state in place without changing any rating) as ``state.*`` and, if
        ``events``, the event log as ``events.*``.  :meth:`from_arrays` inverts it.
        """
        meta = {
            **(header or {}),
            "system": self.system_name,
            "params": self.system.params(),
            "last_time": self.last_time,
            "contests": [
                [c.name, c.time_seconds, c.url, c.players, c.skipped] for c in self.contests
            ],
        }
        table = self.players.to_arrays()
        handles = table.pop("handles").tolist()
        arrays: dict[str, np.ndarray] = {
            "meta": _json_bytes(meta),
            "handles": _json_bytes(handles),
        }
        for k, v in table.items():
            arrays[f"table.{k}"] = v
        for k, v in self.state.to_arrays().items():
            arrays[f"state.{k}"] = v
        if events:
            for k, v in self.events.arrays().items():
                arrays[f"events.{k}"] = v
            if self.events.team_names:
                arrays["events_team_names"] = _json_bytes(self.events.team_names)
        return arrays

    @classmethod
    def from_arrays(
        cls, data: Mapping[str, np.ndarray], *, events: EventLog | None = None,
        where: str = "<arrays>", what: str = "checkpoint",
    ) -> Rater:
        """Rebuild a Rater from :meth:`to_arrays` output.

        Parameters
        ----------
        data:
            The named arrays.
        events:
            The event sink of the new Rater (as in the constructor); by default the
            image's event log when it has one, else an empty :class:`EventLog`.  A
            given sink is used as it is (the image's events are not loaded into it).
        where, what:
            The file (or other source) and what it is, for error messages.

        Raises
        ------
        CheckpointError
            ``"{where}: {what} is damaged or inconsistent (...)"`` when an entry is
            missing or inconsistent, or naming the unknown system or parameter.
        """
        try:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            system, params = meta["system"], meta["params"]
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{where}: {what} has no readable metadata ({exc})") from None
        try:
            rater = cls(system, events=events, **_saved_params(system, params))
        except ConfigError as exc:
            raise CheckpointError(f"{where}: {exc}") from None
        try:
            handles = json.loads(bytes(data["handles"]).decode("utf-8"))
            table = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("table.")}
            table["handles"] = np.array(handles, dtype=object)
            rater.players = PlayerTable.from_arrays(table)
            state = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("state.")}
            rater.state = type(rater.state).from_arrays(state)
            rater.state.ensure_players(rater.players.n)
            logged = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith("events.")}
            if logged and events is None:
                team_names = (json.loads(bytes(data["events_team_names"]).decode("utf-8"))
                              if "events_team_names" in data else [])
                rater.events = EventLog.from_arrays(logged, team_names)
            rater.contests = ContestLog(meta["contests"])
            rater.last_time = meta["last_time"]
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{where}: {what} is damaged or inconsistent ({exc})") from None
        if rater.players.mu.size != rater.players.n:
            raise CheckpointError(f"{where}: {what} is inconsistent (player arrays)")
        return rater

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write a versioned checkpoint atomically (see :mod:`podium.checkpoint`)."""
        from podium.checkpoint import checkpoint_header, write_checkpoint

        write_checkpoint(self.to_arrays(header=checkpoint_header()), path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Rater:
        """Resume from a checkpoint written by :meth:`save`.

        Raises
        ------
        CheckpointError
            When the file is missing, not a Podium checkpoint, of an unknown
            version, or inconsistent.
        """
        from podium.checkpoint import read_checkpoint

        return cls.from_arrays(read_checkpoint(path), where=os.fspath(path),
                               what="checkpoint")


def _json_bytes(obj: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(obj, allow_nan=True).encode("utf-8"), dtype=np.uint8)


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
