"""Whole-history rating engines: every past rating re-estimated from every contest.

* :func:`~podium.history.ttt.ttt` -- TrueSkill Through Time ([Dangauthier2007]);
* :func:`~podium.history.whr.whr` -- Whole-History Rating ([Coulom2008]);
* :func:`~podium.history.mmr_smooth.mmr_smooth` -- ``mmr-smooth``, Elo-MMR
  ([EbtekarLiu2021]) with a backward pass; :func:`~podium.history.mmr_smooth.smooth_extend`
  adds contests incrementally, :func:`~podium.history.mmr_smooth.smooth_forecast` gives
  the causal ratings for evaluation.

They take a :class:`~podium.history.data.ContestHistory` (plain arrays, see
:mod:`podium.history.data`); :func:`~podium.history.data.history_from_contests` builds
one from Podium's contests.  See docs/history.md.
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podium.history.data import (
        ContestHistory,
        LabelledHistory,
        PlayerRounds,
        check_history,
        history_from_arrays,
        history_from_contests,
        player_rounds,
    )
    from podium.history.mmr_smooth import (
        SmoothResult,
        UpdateReport,
        mmr_smooth,
        smooth_extend,
        smooth_forecast,
    )
    from podium.history.params import MMRParams
    from podium.history.smooth_state import SmoothState
    from podium.history.sweeps import SweepReport
    from podium.history.ttt import TTTResult, learning_curves, ttt
    from podium.history.whr import ELO_PER_NAT, WHRResult, whr

__all__ = [
    "ContestHistory",
    "LabelledHistory",
    "PlayerRounds",
    "check_history",
    "history_from_arrays",
    "history_from_contests",
    "player_rounds",
    "TTTResult",
    "learning_curves",
    "ttt",
    "MMRParams",
    "SmoothResult",
    "SmoothState",
    "SweepReport",
    "UpdateReport",
    "mmr_smooth",
    "smooth_extend",
    "smooth_forecast",
    "ELO_PER_NAT",
    "WHRResult",
    "whr",
]

#: name -> the module that owns it; imported on first use (the engines load Numba, and
#: ``podium systems`` lists the whole-history systems without it)
_OWNERS: dict[str, str] = {
    "ContestHistory": "podium.history.data",
    "LabelledHistory": "podium.history.data",
    "PlayerRounds": "podium.history.data",
    "check_history": "podium.history.data",
    "history_from_arrays": "podium.history.data",
    "history_from_contests": "podium.history.data",
    "player_rounds": "podium.history.data",
    "MMRParams": "podium.history.params",
    "SmoothResult": "podium.history.mmr_smooth",
    "UpdateReport": "podium.history.mmr_smooth",
    "mmr_smooth": "podium.history.mmr_smooth",
    "smooth_extend": "podium.history.mmr_smooth",
    "smooth_forecast": "podium.history.mmr_smooth",
    "SmoothState": "podium.history.smooth_state",
    "SweepReport": "podium.history.sweeps",
    "TTTResult": "podium.history.ttt",
    "learning_curves": "podium.history.ttt",
    "ttt": "podium.history.ttt",
    "ELO_PER_NAT": "podium.history.whr",
    "WHRResult": "podium.history.whr",
    "whr": "podium.history.whr",
}


def __getattr__(name: str) -> Any:
    try:
        module = _OWNERS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package, whose functions ``ttt`` and ``whr`` keep their names when their
    modules (``podium.history.ttt``, ``podium.history.whr``) are imported: the import
    system binds a submodule to its package's attribute of the same name, which would
    hide the function that :func:`__getattr__` gives."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in _OWNERS:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
