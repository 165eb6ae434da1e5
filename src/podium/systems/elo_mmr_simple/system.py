"""Elo-MMR written as the paper's pseudocode (Algorithms 1-3), in plain NumPy.

This is the "obviously correct" version: per round it evaluates ``Q_i`` over
all ``N`` opponents for all players at once (``O(N^2)`` memory in blocks) and
finds every zero by vectorised bisection, and keeps each player's history as
plain arrays of performances and weights.  It shares no numerics with
:class:`~podium.systems.elo_mmr.EloMMR` (no Newton, no interpolation, no lazy
scaling), which makes agreement between the two a meaningful test.  Use it
for checking and teaching, not for large histories.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Self

import numpy as np
import numpy.typing as npt

from podium.core.numerics import SOLVER_BOUNDS, TANH_MULTIPLIER
from podium.systems.base import (
    RATING_RANGE,
    ArrayState,
    PerformanceModel,
    RatingSystem,
    RoundInput,
    RoundOutput,
    SystemState,
    param,
    player_array,
)
from podium.systems.base.two_phase_teams import check_teams
from podium.systems.elo_mmr import round_performance_model

__all__ = ["SimpleEloMMR", "SimpleState"]

FloatArray = npt.NDArray[np.float64]
_BISECTIONS = 80  # (9000 + 6000) / 2**80 ~ 1e-20: below double precision
_BLOCK = 1 << 22  # matrix entries per block of players


class SimpleState(ArrayState):
    """Per player: Gaussian factor (p0, w0) and lists of logistic factors (p_k, w_k, beta_k).

    ``p0`` and ``w0`` are declared per-player arrays (newcomer ``(mu_noob,
    1/sig_noob^2)``); the ragged lists extend the derived methods as ``counts`` (factors
    per player) and the flat ``p``, ``w``, ``b``.
    """

    FIELDS = (player_array("p0", fill="mu_noob"), player_array("w0", fill="w_noob"))
    PARAMS = ("mu_noob", "sig_noob")
    mu_noob: float
    sig_noob: float
    p0: FloatArray
    w0: FloatArray

    def __init__(self, mu_noob: float, sig_noob: float) -> None:
        super().__init__(mu_noob, sig_noob)
        self.p: list[list[float]] = []
        self.w: list[list[float]] = []
        self.b: list[list[float]] = []

    @property
    def w_noob(self) -> float:
        """A newcomer's ``w0 = 1 / sig_noob^2``."""
        return float(self.sig_noob**-2)

    def ensure_players(self, n: int) -> None:
        for _ in range(self.n, n):
            self.p.append([])
            self.w.append([])
            self.b.append([])
        super().ensure_players(n)

    def to_arrays(self) -> dict[str, np.ndarray]:
        base = super().to_arrays()
        prior = base.pop(self.PARAMS_KEY)
        counts = np.array([len(x) for x in self.p[: self.n]], dtype=np.int64)
        flat = lambda xs: np.array([v for x in xs for v in x], dtype=np.float64)  # noqa: E731
        return {
            **base, "counts": counts,
            "p": flat(self.p[: self.n]), "w": flat(self.w[: self.n]), "b": flat(self.b[: self.n]),
            self.PARAMS_KEY: prior,
        }

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> Self:
        st = super().from_arrays(d)
        offs = np.concatenate([[0], np.cumsum(d["counts"])])
        if offs.size - 1 != st.n:
            raise ValueError(f"state entry 'counts' has {offs.size - 1} rows, not {st.n}")
        for name in ("p", "w", "b"):
            arr = d[name].tolist()
            setattr(st, name, [arr[offs[i]: offs[i + 1]] for i in range(len(offs) - 1)])
        return st

    def copy(self) -> Self:
        st = super().copy()
        st.p = [list(x) for x in self.p]
        st.w = [list(x) for x in self.w]
        st.b = [list(x) for x in self.b]
        return st


@dataclass(frozen=True)
class SimpleEloMMR(RatingSystem):
    """Elo-MMR(rho) by the book: Algorithm 1 with diffuse (Alg. 2) and update (Alg. 3).

    Same parameters and defaults as :class:`~podium.systems.elo_mmr.EloMMR`'s
    exact logistic system (a contest's ``perf_ceiling`` caps performances),
    without subsampling or compression.
    """

    name: ClassVar[str] = "mmr-simple"
    team_rule: ClassVar[str | None] = (
        "two-phase: team performance from the team terms (weighted sums), then each member "
        "conditioned on the team sum (docs/teams.md)"
    )

    weight_limit: float = param(0.2, "positive")
    sig_limit: float = param(80.0, "positive", lo=1.0)
    rho: float = param(1.0, "nonnegative", hi=1000.0)
    perf_ceiling: float | None = param(None, "number_or_none")
    mu_noob: float = param(1500.0, "finite", **RATING_RANGE)
    sig_noob: float = param(350.0, "positive")
    display_sigmas: float = param(3.0, "finite")

    display_center: ClassVar[str | None] = "sig_limit"

    def make_state(self) -> SimpleState:
        return SimpleState(self.mu_noob, self.sig_noob)

    def performance_model(
        self, sigma: FloatArray, played: npt.NDArray[np.int64], weight: float
    ) -> PerformanceModel:
        """As :meth:`EloMMR.performance_model <podium.systems.elo_mmr.EloMMR.performance_model>`
        (logistic; no ``noob_delay``, no drift per day)."""
        return round_performance_model(self, sigma, played, weight, np.zeros(0), 0.0, "logistic")

    def round_update(self, state: SystemState, rnd: RoundInput) -> RoundOutput:
        assert isinstance(state, SimpleState)
        if rnd.team_offsets is not None:
            assert rnd.weight is not None
            return self.team_update(state, rnd, rnd.team_offsets, rnd.weight)
        w = rnd.contest.weight * self.weight_limit
        beta = self.sig_limit * math.sqrt(1.0 + 1.0 / w)
        gamma = self.sig_limit * math.sqrt(w)
        n = rnd.players.size
        sig = self._diffuse(state, rnd, gamma)
        delta = np.sqrt(sig**2 + beta**2)
        perf = self._ceiling(rnd, _performances(rnd.mu, delta, rnd.lo))
        mu = np.empty(n)
        for k, i in enumerate(rnd.players.tolist()):
            state.p[i].append(float(perf[k]))
            state.w[i].append(beta**-2)
            state.b[i].append(beta)
            mu[k] = _rating(state.p0[i], state.w0[i], state.p[i], state.w[i], state.b[i])
        sigma = 1.0 / np.sqrt(1.0 / sig**2 + 1.0 / beta**2)
        return RoundOutput(mu=mu, sigma=sigma, perf=perf)

    def team_update(self, state: SimpleState, rnd: RoundInput, offsets: npt.ArrayLike,
                    weight: npt.ArrayLike) -> RoundOutput:
        """A team round by the book (docs/teams.md, "Elo-MMR and Elo-R"): diffuse every
        member (Algorithm 2); solve each team's performance ``P_T`` by bisection over
        the team terms ``mu_T = sum_i w_i mu_i``, ``delta_T^2 = sum_i w_i^2 delta_i^2``
        (Theorem 3.2); give each member the logistic factor ``(p_i, b_i)`` of
        conditioning on the team sum, ``p_i = mu_i + (P_T - mu_T) / w_i`` and
        ``b_i^2 = beta^2 + sum_{j != i} (w_j / w_i)^2 delta_j^2`` (capped by the
        performance ceiling), and solve Eq. 6; ``1/sigma^2 = 1/sigma'^2 + 1/b_i^2``
        (Eq. 8).

        Written without :mod:`podium.systems.base.two_phase_teams`, from the formulas, so that
        its agreement with :class:`~podium.systems.elo_mmr.EloMMR` tests both.
        """
        n = rnd.players.size
        offs, wt = check_teams(offsets, weight, n)
        w = rnd.contest.weight * self.weight_limit
        beta = self.sig_limit * math.sqrt(1.0 + 1.0 / w)
        gamma = self.sig_limit * math.sqrt(w)
        sig = self._diffuse(state, rnd, gamma)
        delta = np.sqrt(sig**2 + beta**2)
        var = (wt * delta) ** 2  # w_i^2 delta_i^2
        teams = [range(int(offs[t]), int(offs[t + 1])) for t in range(offs.size - 1)]
        mu_t = np.array([sum(float(wt[k] * rnd.mu[k]) for k in r) for r in teams])
        var_t = np.array([sum(float(var[k]) for k in r) for r in teams])
        # a one-member team: its member's own term, with no round trip
        delta_t = np.array([float(wt[r[0]] * delta[r[0]]) if len(r) == 1
                            else math.sqrt(var_t[t]) for t, r in enumerate(teams)])
        # team ratings are sums: solve around their mean (one-member teams: as individuals)
        center = float(np.mean(mu_t)) if mu_t.size < n else 0.0
        perf_t = _performances(mu_t - center, delta_t, rnd.lo[offs[:-1]]) + center
        perf = np.empty(n)
        noise = np.empty(n)
        for t, r in enumerate(teams):
            for k in r:
                if len(r) == 1:
                    perf[k] = perf_t[t] / wt[k]
                    noise[k] = beta
                    continue
                others = sum(float(var[j]) for j in r if j != k)
                perf[k] = rnd.mu[k] + (perf_t[t] - mu_t[t]) / wt[k]
                noise[k] = math.sqrt(beta**2 + others / float(wt[k]) ** 2)
        perf = self._ceiling(rnd, perf)
        mu = np.empty(n)
        for k, i in enumerate(rnd.players.tolist()):
            bk = float(noise[k])
            state.p[i].append(float(perf[k]))
            state.w[i].append(bk**-2)
            state.b[i].append(bk)
            mu[k] = _rating(state.p0[i], state.w0[i], state.p[i], state.w[i], state.b[i])
        # Eq. 8; a member measured with the round's beta exactly as an individual
        sigma = 1.0 / np.sqrt(1.0 / sig**2 + np.where(noise == beta, 1.0 / beta**2,
                                                      1.0 / noise**2))
        return RoundOutput(mu=mu, sigma=sigma, perf=perf)

    def _diffuse(self, state: SimpleState, rnd: RoundInput, gamma: float) -> FloatArray:
        """Algorithm 2, diffuse(i, gamma, rho), for every participant; returns the new
        sigmas."""
        sig = np.empty(rnd.players.size)
        for k, i in enumerate(rnd.players.tolist()):
            kappa = 1.0 / (1.0 + gamma**2 / rnd.sigma[k] ** 2)
            tr = kappa**self.rho
            logistic = [wk for wk in state.w[i]]
            w_g = tr * state.w0[i]
            w_l = (1.0 - tr) * (state.w0[i] + sum(logistic))
            state.p0[i] = (w_g * state.p0[i] + w_l * rnd.mu[k]) / (w_g + w_l)
            state.w0[i] = kappa * (w_g + w_l)
            state.w[i] = [kappa ** (1.0 + self.rho) * wk for wk in logistic]
            sig[k] = rnd.sigma[k] / math.sqrt(kappa)
        return sig

    def _ceiling(self, rnd: RoundInput, perf: FloatArray) -> FloatArray:
        """Performances capped by the contest's ceiling (else the system's)."""
        c = rnd.contest
        ceiling = c.perf_ceiling if c.perf_ceiling is not None else self.perf_ceiling
        return np.minimum(perf, ceiling) if ceiling is not None else perf


def _performances(mu: FloatArray, delta: FloatArray, lo: npt.NDArray[np.int64]) -> FloatArray:
    """Zero of Q_i for every player i by bisection (Algorithm 3, first line)."""
    n = mu.size
    w_out = TANH_MULTIPLIER / delta  # 1/delta-bar
    w_arg = 0.5 * w_out
    out = np.empty(n)
    rows = max(1, _BLOCK // max(n, 1))
    for s in range(0, n, rows):
        e = min(n, s + rows)
        my = lo[s:e, None]
        better = (lo[None, :] < my).astype(np.float64)  # j beat i: loss term
        worse = (lo[None, :] > my).astype(np.float64)  # i beat j: win term
        tie = 1.0 - better - worse  # tied (includes i itself): counts twice
        a = np.full(e - s, SOLVER_BOUNDS[0])
        b = np.full(e - s, SOLVER_BOUNDS[1])
        for _ in range(_BISECTIONS):
            x = 0.5 * (a + b)
            val = -w_out[None, :] * np.tanh((x[:, None] - mu[None, :]) * w_arg[None, :])
            q = (val * (1.0 + tie) - w_out[None, :] * better + w_out[None, :] * worse).sum(axis=1)
            pos = q > 0
            a = np.where(pos, x, a)
            b = np.where(pos, b, x)
        out[s:e] = 0.5 * (a + b)
    return out


def _rating(p0: float, w0: float, p: list[float], w: list[float], b: list[float]) -> float:
    """Zero of Eq. 6 with multiplicities: w0 (x - p0) + sum_k (w_k beta_k^2) pi/(sqrt3 beta_k)
    tanh(pi (x - p_k) / (2 sqrt3 beta_k)), by bisection."""
    pa = np.asarray(p)
    ba = np.asarray(b)
    mult = np.asarray(w) * ba**2  # fractional multiplicity omega_k
    w_out = mult * TANH_MULTIPLIER / ba
    w_arg = 0.5 * TANH_MULTIPLIER / ba
    lo, hi = SOLVER_BOUNDS
    for _ in range(_BISECTIONS):
        x = 0.5 * (lo + hi)
        f = w0 * (x - p0) + float(np.sum(w_out * np.tanh((x - pa) * w_arg)))
        if f < 0:
            lo = x
        else:
            hi = x
    return 0.5 * (lo + hi)
