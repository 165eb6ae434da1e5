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
    MMRParams,
    SmoothResult,
    UpdateReport,
    mmr_smooth,
    smooth_extend,
    smooth_forecast,
)
from podium.history.smooth_state import SmoothState, SweepReport
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
