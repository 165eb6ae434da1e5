"""What every rating system shares: the interface and the pieces several systems use.

* :mod:`~podium.systems.base.system` -- :class:`RatingSystem`, the one interface
  (parameters, state, newcomer prior, display rating, performance model, update rule,
  declared hooks);
* :mod:`~podium.systems.base.params` -- named, checked hyper-parameters (:func:`param`);
* :mod:`~podium.systems.base.state` -- per-player state declared field by field
  (:class:`ArrayState`);
* :mod:`~podium.systems.base.rounds` -- one round or a batch of rounds as a system sees
  them (:class:`RoundInput`, :class:`RoundBatch`) and what it gives back;
* :mod:`~podium.systems.base.performance` -- the performance model behind predictions;
* :mod:`~podium.systems.base.spec` -- what a system folder declares about itself
  (:class:`SystemSpec`: presets, tuning search space, kernels, compile estimate);
* :mod:`~podium.systems.base.explain` -- the shared steps of an explanation;
* :mod:`~podium.systems.base.factor_pool` and
  :mod:`~podium.systems.base.factor_pool_kernels` -- the pooled logistic factors of
  Elo-MMR and Elo-R;
* :mod:`~podium.systems.base.entity_teams` (a team as one entity) and
  :mod:`~podium.systems.base.two_phase_teams` (team terms and member measurements of
  Elo-MMR and Elo-R): the shared team rules (docs/teams.md).

This module re-exports the interface; the shared rules are imported from their own
modules.
"""

from __future__ import annotations

from podium.systems.base.params import RATING_RANGE, Check, check_param, param
from podium.systems.base.performance import ELO_BETA, PerformanceKind, PerformanceModel
from podium.systems.base.rounds import (
    RoundBatch,
    RoundInput,
    RoundOutput,
    RoundsOutput,
    batch_teams,
)
from podium.systems.base.spec import Preset, SearchRange, SystemSpec
from podium.systems.base.state import (
    ArrayState,
    NoPlayerState,
    StateField,
    SystemState,
    int_scalar,
    player_array,
    whole_array,
)
from podium.systems.base.system import RatingSystem

__all__ = [
    "RatingSystem",
    "SystemState",
    "ArrayState",
    "StateField",
    "player_array",
    "whole_array",
    "int_scalar",
    "NoPlayerState",
    "RoundInput",
    "RoundOutput",
    "PerformanceModel",
    "PerformanceKind",
    "ELO_BETA",
    "Check",
    "param",
    "check_param",
    "RATING_RANGE",
    "Preset",
    "SearchRange",
    "SystemSpec",
    "RoundBatch",
    "RoundsOutput",
    "batch_teams",
]
