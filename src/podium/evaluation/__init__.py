"""Evaluation and tuning: score rating systems as [EbtekarLiu2021] (Sec. 6) does.

* :func:`evaluate` rates a history and scores each contest's prediction from the
  ratings just before it (:mod:`podium.evaluation.metrics`);
* :func:`tune` searches hyper-parameters on the first part of a history (optuna);
* :func:`volatility_farming` is the incentive experiment of the paper's code.
"""

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
