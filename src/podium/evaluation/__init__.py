"""Evaluation and tuning: score rating systems as [EbtekarLiu2021] (Sec. 6) does.

* :func:`evaluate` rates a history and scores each contest's prediction from the
  ratings just before it (:mod:`podium.evaluation.metrics`);
* :func:`tune` searches hyper-parameters on the first part of a history (optuna);
* :func:`volatility_farming` is the incentive experiment of the paper's code.

The names are imported on first use (PEP 562), so that importing a module of the
package -- ``podium.evaluation.cli`` registers the commands of ``podium --help`` --
loads neither the rating systems nor Numba.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podium._lazy import lazy_names

if TYPE_CHECKING:
    from podium.evaluation.incentive import IncentiveResult, volatility_farming
    from podium.evaluation.runner import EvalResult, evaluate, train_size
    from podium.evaluation.tuning import TuneResult, search_spaces, tune, write_params_file

__all__ = [
    "search_spaces",
    "EvalResult",
    "IncentiveResult",
    "TuneResult",
    "evaluate",
    "train_size",
    "tune",
    "volatility_farming",
    "write_params_file",
]

#: Public name -> the module that defines it (imported on first access).
_LAZY = {
    "IncentiveResult": "podium.evaluation.incentive",
    "volatility_farming": "podium.evaluation.incentive",
    "EvalResult": "podium.evaluation.runner",
    "evaluate": "podium.evaluation.runner",
    "train_size": "podium.evaluation.runner",
    "TuneResult": "podium.evaluation.tuning",
    "search_spaces": "podium.evaluation.tuning",
    "tune": "podium.evaluation.tuning",
    "write_params_file": "podium.evaluation.tuning",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
