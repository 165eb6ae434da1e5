"""Elo-MMR's compiled path over small rounds: what :meth:`EloMMR.rate_rounds
<podium.systems.elo_mmr.EloMMR.rate_rounds>` and :meth:`EloMMR.rate_small_round
<podium.systems.elo_mmr.EloMMR.rate_small_round>` call for rounds of at most
:data:`BATCH_MAX_PLAYERS` players once the Rater has seen :data:`BATCH_AFTER` contests.

The kernels (:mod:`podium.systems.elo_mmr.rounds_kernels`) repeat the system's own steps
(:meth:`~podium.systems.elo_mmr.EloMMR.diffuse`, the performance,
:meth:`~podium.systems.elo_mmr.EloMMR.absorb`) in compiled code, so that the numbers are
the same bit for bit; the system takes this path only while a subclass overrides none
of its declared hooks.  The kernels are imported, compiled or loaded, on first use.
"""

from __future__ import annotations

import math
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from podium.core.numerics import GAUSSIAN, LOGISTIC
from podium.systems.base import RoundBatch, RoundsOutput

if TYPE_CHECKING:
    from podium.core.contest import Contest
    from podium.core.state import PlayerTable
    from podium.systems.elo_mmr.system import EloMMR, EloMMRState

__all__ = ["DIRECT_GROUPS", "BATCH_MAX_PLAYERS", "BATCH_AFTER", "RoundsParams",
           "rounds_params", "rate_small_rounds", "add_small_round", "add_kernel_ready"]

FloatArray = npt.NDArray[np.float64]
#: The system's parameters as the kernels take them: floats, integers, ``noob_delay``.
RoundsParams = tuple[FloatArray, npt.NDArray[np.int64], FloatArray]

#: Rounds with at most this many tie groups solve each group directly (cheaper than panels).
DIRECT_GROUPS = 24
#: The compiled loop rates rounds of at most this many players (they have at most
#: ``DIRECT_GROUPS`` tie groups, so the exact solve is direct) ...
BATCH_MAX_PLAYERS = DIRECT_GROUPS
#: ... once the Rater has seen this many contests (before that, or for larger rounds,
#: ``round_update``), so that rating a few contests never compiles or loads that loop.
BATCH_AFTER = 32


def _rounds_kernels() -> ModuleType:
    """:mod:`podium.systems.elo_mmr.rounds_kernels`, imported on first use."""
    import podium.systems.elo_mmr.rounds_kernels as rk

    return rk


def add_kernel_ready() -> bool:
    """Whether this process holds the compiled ``Rater.add`` round
    (:func:`~podium.systems.elo_mmr.rounds_kernels.elo_mmr_add`), compiled or loaded
    from Numba's cache by an earlier call: then ``Rater.add`` takes it from the first
    contest on, else from contest :data:`BATCH_AFTER` on, so that a Rater of a few
    contests does not load it.  A fact about the process, not a flag one Rater sets
    for the next; either path gives the same numbers, bit for bit."""
    rk = sys.modules.get("podium.systems.elo_mmr.rounds_kernels")
    return rk is not None and bool(rk.elo_mmr_add.overloads)


def rounds_params(system: EloMMR) -> RoundsParams:
    """The parameters of :func:`~podium.systems.elo_mmr.rounds_kernels.elo_mmr_rounds`
    and ``elo_mmr_add`` for ``system``."""
    RK = _rounds_kernels()

    RK = _rounds_kernels()

    f = np.empty(8)
    f[RK.F_WEIGHT_LIMIT] = system.weight_limit
    f[RK.F_SIG_LIMIT] = system.sig_limit
    f[RK.F_DRIFT] = system.drift_per_day
    f[RK.F_RHO] = system.rho
    f[RK.F_WIDTH] = system.subsample_bucket
    f[RK.F_HIST_TOL] = system.history_tolerance if system.max_history is None else 0.0
    f[RK.F_DISPLAY_SIGMAS] = system.display_sigmas
    f[RK.F_CEILING] = math.nan if system.perf_ceiling is None else system.perf_ceiling
    i = np.empty(6, dtype=np.int64)
    i[RK.I_COLLAPSE] = system.collapses
    i[RK.I_KIND] = GAUSSIAN if system.variant == "gaussian" else LOGISTIC
    i[RK.I_SPLIT_TIES] = system.split_ties
    i[RK.I_SUBSAMPLE] = 0 if system.subsample_size is None else system.subsample_size
    i[RK.I_MAX_HISTORY] = (system.max_history if system.max_history is not None
                           else np.iinfo(np.int64).max)
    i[RK.I_DIRECT_GROUPS] = DIRECT_GROUPS
    return f, i, np.asarray(system.noob_delay, dtype=np.float64)


def rate_small_rounds(state: EloMMRState, batch: RoundBatch, r0: int, r1: int,
                      out: RoundsOutput, params: RoundsParams) -> None:
    """Rounds ``r0..r1-1`` of ``batch`` (all small) in one compiled loop, writing their
    events and warnings into ``out`` (``out.done`` becomes ``r1``)."""
    from podium.core.numerics import status_warnings

    RK = _rounds_kernels()
    fparams, iparams, noob_delay = params
    state.ensure_players(batch.players_after[r1 - 1])
    status = np.zeros((2, batch.players.size), dtype=np.int8)
    state.f_mu, state.f_warg, state.f_wout, state.used, flagged = RK.elo_mmr_rounds(
        r0, r1, batch.offsets, batch.players, batch.lo, batch.time_seconds, batch.weight,
        batch.perf_ceiling, batch.mu, batch.sigma, batch.played, batch.last_time,
        batch.max_display, batch.last_change, fparams, iparams, noob_delay,
        state.nf_mu, state.nf_w, state.scale, state.sum_aw, state.sum_w,
        state.fb_base, state.fb_cap, state.fb_start, state.fb_len,
        state.f_mu, state.f_warg, state.f_wout, state.used, out.events, status,
    )
    if not flagged:
        out.warnings += [()] * (r1 - r0)
    else:
        contests = batch.contests
        for r in range(r0, r1):
            a, b = int(batch.offsets[r]), int(batch.offsets[r + 1])
            c = contests[r]
            out.warnings.append(tuple(
                status_warnings(status[0, a:b], c.label, "performance")
                + status_warnings(status[1, a:b], c.label, "rating")
            ))
    out.done = r1
    # what maybe_compact would do after each round, checked once; it can only
    # compact when the pool holds more than 4 slots per player
    if state.used > 4 * state.n:
        state.maybe_compact()


def add_small_round(
    state: EloMMRState, table: PlayerTable, contest: Contest, index: int,
    players: npt.NDArray[np.int64], n_before: int, n_after: int,
    prior: tuple[float, float], events: tuple[FloatArray, np.ndarray, int],
    params: RoundsParams,
) -> Any:
    """``Rater.add`` of one small individual round in one compiled call
    (:func:`~podium.systems.elo_mmr.rounds_kernels.elo_mmr_add`); the arguments and the
    result are those of :meth:`EloMMR.rate_small_round
    <podium.systems.elo_mmr.EloMMR.rate_small_round>`, which checks that the round is
    for this path."""
    RK = _rounds_kernels()
    fparams, iparams, noob_delay = params
    s_n = state.n
    if n_after > s_n:
        if state.nf_mu.shape[0] < n_after:
            state.ensure_players(n_after)
        else:  # the kernel writes the newcomers' rows
            state.n = n_after
    ceiling = contest.perf_ceiling
    # the kernel writes the first players.size columns, read only when flagged
    status = state.add_status
    ev_f, ev_i, at = events
    while True:
        grow_to, used, flagged = RK.elo_mmr_add(
            players, contest.lo, contest.time_seconds, contest.weight,
            math.nan if ceiling is None else ceiling, index, n_before, n_after, s_n,
            prior[0], prior[1], state.mu_noob, 1.0 / state.sig_noob**2,
            table.mu, table.sigma, table.contests, table.last_time, table.max_display,
            table.last_change, fparams, iparams, noob_delay,
            state.nf_mu, state.nf_w, state.scale, state.sum_aw, state.sum_w,
            state.fb_base, state.fb_cap, state.fb_start, state.fb_len,
            state.f_mu, state.f_warg, state.f_wout, state.used, ev_f, ev_i, at, status,
        )
        if not grow_to:
            break
        # the pool grows as factor_pool_kernels.reserve grows it (zeros beyond `used`)
        for name in ("f_mu", "f_warg", "f_wout"):
            pool = np.zeros(grow_to)
            pool[:used] = getattr(state, name)[:used]
            setattr(state, name, pool)
    state.used = used
    if state.used > 4 * state.n:  # as in rate_small_rounds
        state.maybe_compact()
    if not flagged:
        return ()
    from podium.core.numerics import status_warnings  # (a flagged round only)

    n = players.size
    return (*status_warnings(status[0, :n], contest.label, "performance"),
            *status_warnings(status[1, :n], contest.label, "rating"))
