"""The whole-history engines as systems a user chooses by name (``podium rate --system
ttt``): their names, parameters and defaults, and one call that smooths a history.
The engines (and Numba) are imported by :meth:`WholeHistorySystem.fit` only, so that
``podium systems`` lists them without loading a compiler.

:data:`HISTORY_SYSTEMS` lists them; :func:`get_history_system` builds one.  Each is a
:class:`WholeHistorySystem`: its parameters (checked by the engine it runs), its
display rating and :meth:`~WholeHistorySystem.fit`, which re-estimates every rating of
a :class:`~podium.history.data.ContestHistory`: from scratch, or from a previous fit
when the history only grew: ``mmr-smooth`` by any number of contests, ``ttt`` by at
most :data:`TTT_UPDATE_CONTESTS` and ``whr`` by one (from the previous fit's messages
or ratings), at most ``update_sweeps`` sweeps over what the new contests touch; ``whr``
solves a history grown by several contests in full, started from the previous fit's
ratings (docs/history.md).
:class:`podium.history_rater.HistoryRater` keeps the players and events of a fit.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from podium.errors import ConfigError, ContestError
from podium.history.data import ContestHistory
from podium.history.params import UPDATE_SPREAD, MMRParams, check_coarse
from podium.systems.base.spec import SearchRange

if TYPE_CHECKING:
    from podium.history.smooth_state import SmoothState

__all__ = ["HISTORY_SYSTEMS", "HistoryFit", "WholeHistorySystem", "TTTSystem",
           "WHRSystem", "SmoothSystem", "get_history_system", "is_history_system",
           "TTT_UPDATE_CONTESTS"]

FloatArray = npt.NDArray[np.float64]

#: The most new contests that ``ttt`` adds to a previous fit by its bounded update
#: (``ttt_update``, all at once, ``update_sweeps`` sweeps); more are solved in full,
#: from scratch.  On the first 5,000 football matches the update of 2 or 5 at once is
#: as near the full solve as that of one (0.125), of 10 four times farther (0.55), of
#: 20 nine times (1.1); 2 or 5 cost 7-10 % of a full solve (3 % on 20,000 matches):
#: docs/history.md, "Several contests at once".
TTT_UPDATE_CONTESTS = 5


class HistoryFit(NamedTuple):
    """One smoothing of a history.

    Attributes
    ----------
    mu, sigma:
        Per row of the history: the smoothed rating and its uncertainty, on the
        system's display scale (NaN on the rows of a contest the engine leaves out).
    perf:
        Per row: the round's performance (``mmr-smooth``; NaN for the others).
    sweeps:
        Sweeps of this fit (for an update: of the bounded update).
    converged:
        Whether it reached its tolerance (an update: whether it settled).
    players:
        Players whose ratings were recomputed.
    max_past_change:
        The largest change of a smoothed rating of a row that existed before the fit
        (0 for a first fit).
    state:
        ``mmr-smooth``'s arrays, to be extended by the next fit; ``None`` otherwise.
    warm:
        ``ttt``'s messages or ``whr``'s ratings by name (a checkpoint's ``warm.*``),
        from which the next fit goes on (``ttt``'s bounded update of up to
        :data:`TTT_UPDATE_CONTESTS` contests; ``whr``'s of one, or its full solve of
        several, started there); ``None`` otherwise.
    """

    mu: FloatArray
    sigma: FloatArray
    perf: FloatArray
    sweeps: int
    converged: bool
    players: int
    max_past_change: float
    state: SmoothState | None
    warm: dict[str, npt.NDArray[np.generic]] | None = None


def _new_contests(previous: HistoryFit | None, history: ContestHistory) -> int | None:
    """How many contests ``history`` has beyond ``previous``'s, when ``previous`` has
    the arrays to go on from (``ttt``'s messages, ``whr``'s ratings); ``None`` when
    there is nothing to go on from (``history`` is solved from scratch)."""
    if previous is None or previous.warm is None:
        return None
    n_old = int(np.searchsorted(history.contest_rows, previous.mu.size, side="left"))
    return history.n_contests - n_old


def _past_change(old_mu: FloatArray | None, mu: FloatArray) -> float:
    if old_mu is None or old_mu.size == 0:
        return 0.0
    d = np.abs(mu[:old_mu.size] - old_mu)
    d = d[np.isfinite(d)]
    return float(d.max()) if d.size else 0.0


class WholeHistorySystem:
    """A whole-history engine with its parameters (the base of the three).

    Parameters
    ----------
    **params:
        Named parameters overriding :attr:`defaults`; an unknown name is refused.

    Raises
    ------
    ConfigError
        For an unknown parameter (the message lists the known ones) or, at the first
        :meth:`fit`, a value the engine refuses.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    defaults: ClassVar[dict[str, Any]] = {}
    #: How a contest in which every side tied is read (``"rate"``: a draw).
    all_tied: ClassVar[str] = "rate"
    #: The parameters ``podium tune`` searches (scored by the causal protocol); empty:
    #: not tunable.
    search_space: ClassVar[dict[str, SearchRange]] = {}

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ConfigError(
                f"unknown parameter(s) {', '.join(unknown)} for {self.name}; known: "
                f"{', '.join(self.defaults)}")
        self._params = {**self.defaults, **params}
        self.check()

    def check(self) -> None:
        """Refuse parameters out of range (the engines check the rest at fit)."""

    def params(self) -> dict[str, Any]:
        """The parameters, every one named."""
        return dict(self._params)

    def display_rating(self, mu: npt.ArrayLike, sigma: npt.ArrayLike) -> FloatArray:
        """The display rating: the smoothed rating ``mu`` itself, whatever ``sigma`` (a
        whole-history estimate needs no conservative shift: it has seen every result)."""
        return np.array(mu, dtype=np.float64)

    def newcomer_mu(self) -> float:
        """The rating of a player before any contest (the prior's mean, on the display
        scale): the causal protocol's rating of a newcomer, the reference of a debut's
        ``last_change``."""
        return 0.0

    def fit(self, history: ContestHistory, *, contest_weight: FloatArray,
            perf_ceiling: FloatArray, previous: HistoryFit | None = None) -> HistoryFit:
        """Smooth ``history``.

        Parameters
        ----------
        history:
            The whole history so far.
        contest_weight, perf_ceiling:
            Per contest of ``history`` (``mmr-smooth`` only).
        previous:
            The fit of this history's first contests, when the history grew since.
        """
        raise NotImplementedError


class TTTSystem(WholeHistorySystem):
    """TrueSkill Through Time ([Dangauthier2007]; :func:`~podium.history.ttt.ttt`)."""

    name = "ttt"
    description = ("whole-history: TrueSkill Through Time [Dangauthier2007] "
                   "(the trueskillthroughtime 1.1.0 model; teams, weights, draws with p_draw)")
    defaults: ClassVar[dict[str, Any]] = {
        "mu": 0.0, "sigma": 6.0, "beta": 1.0, "gamma": 0.03, "p_draw": 0.0,
        "epsilon": 1e-6, "iterations": 30, "update_sweeps": 3, "update_tol": 1e-3}
    #: The prior's width and the drift per day, in units of the performance noise
    #: ``beta`` (which sets the scale).
    search_space: ClassVar[dict[str, SearchRange]] = {
        "sigma": SearchRange(0.5, 20.0, log=True), "gamma": SearchRange(1e-3, 1.0, log=True)}

    def newcomer_mu(self) -> float:
        return float(self._params["mu"])

    def check(self) -> None:
        _check_update(self._params)

    def fit(self, history: ContestHistory, *, contest_weight: FloatArray,
            perf_ceiling: FloatArray, previous: HistoryFit | None = None) -> HistoryFit:
        # the engines load Numba: on first use
        from podium.history.ttt import result_arrays, result_from_arrays, ttt, ttt_update

        p = self._params
        mu0, sigma0, beta = float(p["mu"]), float(p["sigma"]), float(p["beta"])
        gamma, p_draw = float(p["gamma"]), float(p["p_draw"])
        touched = history.n_playing
        try:
            k = _new_contests(previous, history)
            if k is not None and k <= TTT_UPDATE_CONTESTS:
                assert previous is not None and previous.warm is not None
                res, touched = ttt_update(
                    result_from_arrays(previous.warm), history, mu=mu0, sigma=sigma0,
                    beta=beta, gamma=gamma, p_draw=p_draw,
                    tol=float(p["update_tol"]), max_sweeps=int(p["update_sweeps"]))
            else:
                res = ttt(history, mu=mu0, sigma=sigma0, beta=beta, gamma=gamma,
                          p_draw=p_draw, epsilon=float(p["epsilon"]),
                          iterations=int(p["iterations"]))
        except ZeroDivisionError:
            res = None
        if res is None or not np.all(np.isfinite(res.mu[res.row_slot])):
            bad = 0 if res is None else int(
                history.row_contest[~np.isfinite(res.mu[res.row_slot])][0])
            raise ContestError(
                "TrueSkill Through Time's messages broke down numerically (a truncated "
                "Gaussian below double precision: many tied or closely placed teams with a "
                "draw margin; the trueskillthroughtime package fails there too, with a math "
                "domain error); use whr or mmr-smooth for such contests",
                contest=None if res is None else f"#{bad}")
        mu, sigma = res.mu[res.row_slot], res.sigma[res.row_slot]
        return HistoryFit(mu, sigma, np.full(mu.size, np.nan), res.sweeps, res.converged,
                          touched, _past_change(None if previous is None else previous.mu, mu),
                          None, result_arrays(res))


class WHRSystem(WholeHistorySystem):
    """Whole-History Rating ([Coulom2008]; :func:`~podium.history.whr.whr`), in Elo
    (``r * 400 / ln 10``)."""

    name = "whr"
    description = ("whole-history: Whole-History Rating [Coulom2008] (the "
                   "whole-history-rating 3.7.1 model; Plackett-Luce rounds, teams, draws)")
    defaults: ClassVar[dict[str, Any]] = {
        "w2": 300.0, "prior_wins": 0.5, "nu": None, "damping": 1.0, "tol": 1e-10,
        "max_iter": 10000, "memory": 5, "update_sweeps": 3, "update_tol": 0.01}
    #: The Wiener variance per day ``w2`` (Elo², Eq. 1 of [Coulom2008]; it matters only
    #: where contests are on different days) and the first day's virtual games
    #: ``prior_wins`` (Sec. 3.2), both over about three orders of magnitude around
    #: the package's defaults.
    search_space: ClassVar[dict[str, SearchRange]] = {
        "w2": SearchRange(1.0, 1e5, log=True), "prior_wins": SearchRange(0.01, 50.0, log=True)}

    def check(self) -> None:
        _check_update(self._params)

    def fit(self, history: ContestHistory, *, contest_weight: FloatArray,
            perf_ceiling: FloatArray, previous: HistoryFit | None = None) -> HistoryFit:
        from podium.history.whr import ELO_PER_NAT, whr, whr_update
        from podium.history.whr import result_arrays as whr_arrays
        from podium.history.whr import result_from_arrays as whr_from_arrays

        p = self._params
        w2, prior_wins, damping = float(p["w2"]), float(p["prior_wins"]), float(p["damping"])
        nu = None if p["nu"] is None else float(p["nu"])
        up = None
        k = _new_contests(previous, history)
        if k is not None and k <= 1:
            # one contest: the bounded update (3 sweeps leave several contests far from
            # the fixed point: docs/history.md, "Several contests at once")
            assert previous is not None and previous.warm is not None
            up = whr_update(whr_from_arrays(previous.warm), history, w2=w2,
                            prior_wins=prior_wins, nu=nu, damping=damping,
                            tol=float(p["update_tol"]) / ELO_PER_NAT,
                            max_sweeps=int(p["update_sweeps"]))
        if up is None:
            # several: the full solve, started from the previous fit's ratings (the same
            # maximum, in fewer sweeps); a declined update (the draw model changed) and
            # a first fit from scratch
            start = (whr_from_arrays(previous.warm)
                     if k is not None and k > 1 and previous is not None
                     and previous.warm is not None else None)
            res = whr(history, w2=w2, prior_wins=prior_wins, nu=nu, damping=damping,
                      tol=float(p["tol"]), max_iter=int(p["max_iter"]),
                      memory=int(p["memory"]), start=start)
            touched = history.n_playing
        else:
            res, touched = up
        mu = res.r[res.row_slot] * ELO_PER_NAT
        sigma = np.sqrt(res.variance[res.row_slot]) * ELO_PER_NAT
        return HistoryFit(mu, sigma, np.full(mu.size, np.nan), res.sweeps, res.converged,
                          touched, _past_change(None if previous is None else previous.mu, mu),
                          None, whr_arrays(res))


def _check_update(p: dict[str, Any]) -> None:
    """Refuse ``update_sweeps`` below 1 or an ``update_tol`` not finite and positive
    (``ttt``'s and ``whr``'s bounded update)."""
    if int(p["update_sweeps"]) < 1:
        raise ConfigError(f"update_sweeps must be >= 1, got {p['update_sweeps']!r}")
    tol = float(p["update_tol"])
    if not (math.isfinite(tol) and tol > 0):
        raise ConfigError(f"update_tol must be finite and positive, got {p['update_tol']!r}")


class SmoothSystem(WholeHistorySystem):
    """``mmr-smooth``: Elo-MMR with a backward pass
    (:func:`~podium.history.mmr_smooth.mmr_smooth`).  A fit of a grown history
    extends the previous one (:func:`~podium.history.mmr_smooth.smooth_extend`,
    at most ``update_sweeps`` sweeps); ``tol`` and ``max_sweeps`` bound a first fit."""

    name = "mmr-smooth"
    description = ("whole-history: Elo-MMR with a backward pass (two-filter smoother, "
                   "docs/history.md; team rounds by mmr's team rule)")
    defaults: ClassVar[dict[str, Any]] = {
        **{f.name: f.default for f in dataclasses.fields(MMRParams)},
        "tol": 0.01, "max_sweeps": 100, "update_sweeps": 3, "update_spread": UPDATE_SPREAD,
        "window_tol": 1e-9, "memory": 10, "coarse": True}
    all_tied = "skip"

    def newcomer_mu(self) -> float:
        return float(self._params["mu_noob"])

    def check(self) -> None:
        self.mmr_params()
        if int(self._params["update_sweeps"]) < 1:
            raise ConfigError("update_sweeps must be >= 1, got "
                              f"{self._params['update_sweeps']!r}")
        check_coarse(self._params["coarse"])
        spread = float(self._params["update_spread"])
        if not (math.isfinite(spread) and spread >= 1.0):
            raise ConfigError("update_spread (the update's propagation threshold in units "
                              f"of tol) must be finite and at least 1, got {spread!r}")

    def mmr_params(self) -> MMRParams:
        """Elo-MMR's parameters of this system."""
        p = self._params
        return MMRParams(
            weight_limit=float(p["weight_limit"]),
            noob_delay=tuple(float(x) for x in p["noob_delay"]),
            sig_limit=float(p["sig_limit"]), drift_per_day=float(p["drift_per_day"]),
            rho=float(p["rho"]), split_ties=bool(p["split_ties"]),
            mu_noob=float(p["mu_noob"]), sig_noob=float(p["sig_noob"]),
            team_perf_uncertainty=float(p["team_perf_uncertainty"]))

    def params(self) -> dict[str, Any]:
        out = super().params()
        out["noob_delay"] = list(out["noob_delay"])
        if math.isinf(float(out["rho"])):
            out["rho"] = float("inf")
        return out

    def fit(self, history: ContestHistory, *, contest_weight: FloatArray,
            perf_ceiling: FloatArray, previous: HistoryFit | None = None) -> HistoryFit:
        from podium.history.mmr_smooth import mmr_smooth, smooth_extend, smooth_result
        from podium.history.smooth_state import SmoothState

        p = self._params
        if previous is not None and previous.state is not None:
            state = SmoothState.start(history, self.mmr_params(), contest_weight,
                                      perf_ceiling, float(p["window_tol"]))
            state.restore(previous.state.to_arrays())
            old = smooth_result(state, True, [])
            n_new = state.history.n_contests - state.rated
            res, rep = smooth_extend(old, n_new, tol=float(p["tol"]),
                                     max_sweeps=int(p["update_sweeps"]),
                                     spread=float(p["update_spread"]))
            return HistoryFit(res.mu, res.sigma, res.perf, len(rep.sweeps), rep.settled,
                              rep.players, rep.max_past_change, state)
        res = mmr_smooth(history, self.mmr_params(), contest_weight=contest_weight,
                         perf_ceiling=perf_ceiling, tol=float(p["tol"]),
                         max_sweeps=int(p["max_sweeps"]), window_tol=float(p["window_tol"]),
                         memory=int(p["memory"]), coarse=p["coarse"])
        return HistoryFit(res.mu, res.sigma, res.perf, len(res.sweeps), res.converged,
                          history.n_playing, 0.0, res.state)


#: name -> class of every whole-history system (``podium systems`` lists them).
HISTORY_SYSTEMS: dict[str, type[WholeHistorySystem]] = {
    cls.name: cls for cls in (TTTSystem, WHRSystem, SmoothSystem)}


def is_history_system(name: str) -> bool:
    """Whether ``name`` is a whole-history system."""
    return name in HISTORY_SYSTEMS


def get_history_system(name: str, **params: Any) -> WholeHistorySystem:
    """Build the whole-history system ``name`` with ``params``.

    Raises
    ------
    ConfigError
        For an unknown name or parameter.
    """
    try:
        cls = HISTORY_SYSTEMS[name]
    except KeyError:
        raise ConfigError(f"unknown whole-history system {name!r}; available: "
                          f"{', '.join(HISTORY_SYSTEMS)}") from None
    return cls(**params)
