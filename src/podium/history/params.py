"""Elo-MMR's parameters for ``mmr-smooth`` (:class:`MMRParams`) and its update's
propagation threshold (:data:`UPDATE_SPREAD`), without Numba: the system's defaults
are read (``podium systems -v``) without loading a kernel."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from podium.errors import ConfigError

__all__ = ["MMRParams", "UPDATE_SPREAD", "check_coarse"]

#: The bounded update's propagation threshold in units of ``tol``: a performance or
#: cavity that moved by less than ``UPDATE_SPREAD * tol`` is not passed on, and only
#: the tie groups whose performance would move by more than about half of it are
#: solved again (``tol`` stays the accuracy of the beliefs recomputed).  1 passes on
#: every change above ``tol``, as before; docs/history.md ("Incremental update")
#: measures the choice.
UPDATE_SPREAD = 30.0


def check_coarse(coarse: object) -> bool:
    """``mmr-smooth``'s ``coarse`` (the sweeps' per-contest correction,
    :mod:`podium.history.coarse`) as a bool.

    Raises
    ------
    ConfigError
        For a value that is not a bool (a string such as ``"yes"`` included).
    """
    if not isinstance(coarse, (bool, np.bool_)):
        raise ConfigError("coarse (the sweeps' per-contest correction) must be true or "
                          f"false, got {coarse!r}")
    return bool(coarse)


@dataclass(frozen=True)
class MMRParams:
    """Elo-MMR's parameters, with Podium's ``mmr`` defaults (multi-skill's).

    Attributes
    ----------
    weight_limit, noob_delay, sig_limit, drift_per_day:
        ``w = weight * weight_limit * noob_delay[k]`` for a player's ``k``-th round;
        ``beta = sqrt((1 + 1/w) sig_limit^2 + drift_per_day / w)``,
        ``gamma = sqrt(w sig_limit^2 + drift_per_day * days since its last round)``.
    rho:
        Transfer speed of the pseudodiffusion (Algorithm 2); ``inf``: Elo-MMR(inf).
    split_ties:
        A tie counts half a win and half a loss.
    mu_noob, sig_noob:
        Newcomers' prior.
    team_perf_uncertainty:
        Team rounds only, as ``mmr``'s (docs/teams.md, T7): ``u`` in ``Var[P_T |
        standings] = u (1 - 1/pi) delta_T^2 / (T - 1)``, the uncertainty of the team
        performance that each member's measurement carries; 0 conditions on ``P_T`` as
        if it were exact.
    """

    weight_limit: float = 0.2
    noob_delay: tuple[float, ...] = ()
    sig_limit: float = 80.0
    drift_per_day: float = 0.0
    rho: float = 1.0
    split_ties: bool = False
    mu_noob: float = 1500.0
    sig_noob: float = 350.0
    team_perf_uncertainty: float = 1.0

    def __post_init__(self) -> None:
        for name in ("weight_limit", "sig_limit", "sig_noob"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise ConfigError(f"{name} must be finite and positive, got {v!r}")
        if not (math.isfinite(self.drift_per_day) and self.drift_per_day >= 0):
            raise ConfigError(f"drift_per_day must be >= 0, got {self.drift_per_day!r}")
        if not (self.rho >= 0):
            raise ConfigError(f"rho must be >= 0 (or inf), got {self.rho!r}")
        if not (math.isfinite(self.team_perf_uncertainty) and self.team_perf_uncertainty >= 0):
            raise ConfigError("team_perf_uncertainty must be finite and >= 0, got "
                              f"{self.team_perf_uncertainty!r}")
        if not math.isfinite(self.mu_noob):
            raise ConfigError(f"mu_noob must be finite, got {self.mu_noob!r}")
        for x in self.noob_delay:
            if not (math.isfinite(x) and x > 0):
                raise ConfigError(f"noob_delay entries must be positive, got {x!r}")
