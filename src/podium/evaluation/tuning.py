"""Hyper-parameter search as the paper did it: tune on the first part of a history.

The Elo-MMR authors grid-searched each system's parameters on the first ~10% of
each data set and scored the chosen ones on the rest ([EbtekarLiu2021], Sec. 6).  Here
the search is an `optuna <https://optuna.org>`_ study (TPE sampler, seeded):
each trial rates the training contests with one parameter set and is scored by
``pair_inv`` (maximised) or ``rank_dev`` (minimised) of the experienced players
over those contests.  A whole-history system (``whr``, ``ttt``) is tuned the same way,
its trials scored by the causal protocol (:func:`~podium.evaluation.causal.evaluate_causal`:
each training contest predicted from the smoothing of the ones before it).  The study
lives in optuna storage: a SQLite file by default; a PostgreSQL URL lets several
processes or machines add trials to one study (run ``podium tune`` with the same
``--storage`` and ``--study`` on each).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from podium._files import atomic_write
from podium.core.contest import Contest
from podium.errors import ConfigError, ContestError, ConvergenceError
from podium.evaluation.causal import evaluate_causal
from podium.evaluation.runner import EvalResult, evaluate, train_size
from podium.history.engines import HISTORY_SYSTEMS, get_history_system, is_history_system
from podium.systems import SYSTEMS, system_spec
from podium.systems.base import SearchRange

__all__ = [
    "OBJECTIVES",
    "SearchRange",
    "TuneResult",
    "search_space",
    "search_spaces",
    "storage_url",
    "tune",
    "write_params_file",
]


#: Objectives: metric key and whether larger is better.  The team metrics
#: (:mod:`podium.evaluation.team_metrics`) need a history of team contests; ``log_loss``
#: and ``brier`` one of two-team contests.
OBJECTIVES: dict[str, bool] = {"pair_inv": True, "rank_dev": False, "team_pair_inv": True,
                               "team_rank_dev": False, "log_loss": False, "brier": False}


def search_spaces() -> dict[str, dict[str, SearchRange]]:
    """Every tunable system's searched parameters, in the order of
    :data:`~podium.systems.SYSTEMS`, from the ``SPEC`` of each system folder (imports
    every folder)."""
    out: dict[str, dict[str, SearchRange]] = {}
    for name in SYSTEMS:
        space = system_spec(name).search_spaces.get(name)
        if space:
            out[name] = dict(space)
    return out


def search_space(system: str) -> dict[str, SearchRange]:
    """The searched parameters of ``system``, as its folder's ``SPEC`` declares them
    (a whole-history system: its class's ``search_space``; a :class:`ConfigError` if it
    has none)."""
    if is_history_system(system):
        ranges = HISTORY_SYSTEMS[system].search_space
        if not ranges:
            tunable = [n for n, cls in HISTORY_SYSTEMS.items() if cls.search_space]
            raise ConfigError(f"no search space for the whole-history system {system!r}; "
                              f"tunable ones: {', '.join(tunable)}")
        return dict(ranges)
    if system not in SYSTEMS:
        raise ConfigError(f"unknown rating system {system!r}; available: {', '.join(SYSTEMS)}")
    space = system_spec(system).search_spaces.get(system)
    if not space:
        raise ConfigError(
            f"no search space for system {system!r}; tunable systems: "
            f"{', '.join(search_spaces())}"
        )
    return dict(space)


@dataclass(frozen=True)
class TuneResult:
    """Best parameters found, their training score and the study's size."""

    system: str
    objective: str
    best_params: dict[str, float]
    best_value: float
    trials: int
    train_contests: int
    study_name: str
    storage: str


def storage_url(url: str | None) -> str | None:
    """An optuna storage URL, read as the rating store reads ``--db``: a bare path
    means a SQLite file; ``postgresql://`` uses psycopg 3 (``postgresql+psycopg://``)."""
    if not url:
        return None
    from podium.store.engine import normalize_url  # optuna's storage needs SQLAlchemy too

    return normalize_url(url)


def _open_storage(url: str | None, attempts: int = 6) -> Any:
    """optuna's RDB storage for ``url``; several processes starting on an empty
    database race to create its tables, and the losers simply try again."""
    if url is None:
        return None
    import time

    import optuna
    import sqlalchemy.exc

    for k in range(attempts):
        try:
            return optuna.storages.RDBStorage(url)
        except (sqlalchemy.exc.IntegrityError, sqlalchemy.exc.ProgrammingError,
                sqlalchemy.exc.OperationalError):
            if k == attempts - 1:
                raise
            time.sleep(0.2 * 2**k)
    raise AssertionError("unreachable")


def write_params_file(path: str | Path, system: str, params: dict[str, Any],
                      *, extra: dict[str, Any] | None = None) -> None:
    """Write ``{"system": ..., "params": {...}}``, the file ``podium rate/eval --params``
    read (atomically)."""
    doc: dict[str, Any] = {"system": system, "params": params}
    if extra:
        doc.update(extra)
    text = json.dumps(doc, indent=2) + "\n"

    def write(fh: IO[Any]) -> None:
        fh.write(text)

    atomic_write(Path(path), write)


def tune(
    contests: Sequence[Contest],
    system: str,
    *,
    trials: int,
    train_frac: float = 0.1,
    train_contests: int | None = None,
    objective: str = "pair_inv",
    storage: str | None = None,
    study_name: str | None = None,
    seed: int | None = 0,
    fixed: dict[str, Any] | None = None,
    timeout: float | None = None,
    min_history: int = 5,
    callback: Callable[[int, float, dict[str, float], float], None] | None = None,
    refit_every: int = 1,
    update_between: bool = False,
) -> TuneResult:
    """Search ``system``'s parameters on the first ``train_frac`` of ``contests``.

    Parameters
    ----------
    contests:
        The whole history; only its first ``floor(len · train_frac)`` contests are used.
    trials:
        Trials to add to the study in this call (an existing study is continued).
    train_contests:
        The number of leading contests to tune on; overrides ``train_frac`` (pass
        ``len(contests)`` to tune on a whole separate history, e.g. an independent
        draw of the synthetic model).
    objective:
        ``"pair_inv"`` (maximised) or ``"rank_dev"`` (minimised), experienced players;
        on team contests also ``"team_pair_inv"`` (maximised), ``"team_rank_dev"``,
        ``"log_loss"`` or ``"brier"`` (minimised; two-team contests), see
        :mod:`podium.evaluation.team_metrics`.
    storage:
        optuna storage URL (``sqlite:///file.db``, ``postgresql://...``) or ``None``
        for an in-memory study.
    study_name:
        Defaults to ``"<system>-<objective>"``.
    fixed:
        Parameters held fixed (not searched) in every trial.
    callback:
        Called as ``callback(trial_number, value, params, best_value)`` after each trial.
    refit_every, update_between:
        A whole-history system's causal protocol in each trial
        (:func:`~podium.evaluation.causal.evaluate_causal`; ignored for a filter).

    Returns
    -------
    TuneResult
        The best trial of the whole study (including trials added by other processes).
    """
    try:
        import optuna
    except ImportError:
        raise ConfigError(
            "tuning needs optuna: pip install 'podium[eval]' (or pip install optuna)"
        ) from None

    if objective not in OBJECTIVES:
        raise ConfigError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if trials < 1:
        raise ConfigError(f"trials must be at least 1, got {trials}")
    space = search_space(system)
    history = is_history_system(system)
    if history and refit_every < 1:
        raise ConfigError(f"refit_every must be >= 1, got {refit_every!r}")
    if history and objective not in ("pair_inv", "rank_dev"):
        raise ConfigError(f"a whole-history system is tuned by pair_inv or rank_dev (the "
                          f"causal protocol's metrics), not {objective!r}")
    fixed = dict(fixed or {})
    clash = sorted(set(fixed) & set(space))
    if clash:
        space = {k: v for k, v in space.items() if k not in clash}
    n_train = (train_size(len(contests), train_frac) if train_contests is None
               else int(train_contests))
    if n_train > len(contests):
        raise ConfigError(f"train_contests={n_train} but the history has {len(contests)}")
    if n_train < 2:
        raise ConfigError(
            f"the training part has {n_train} contests (train_frac={train_frac} of "
            f"{len(contests)}); it needs at least 2"
        )
    train = list(contests[:n_train])
    # a trial whose numbers break down fails and the study goes on (ttt's messages
    # break down on a contest, as a ContestError naming it)
    failures = (ConvergenceError, ContestError) if history else (ConvergenceError,)
    maximise = OBJECTIVES[objective]
    name = study_name or f"{system}-{objective}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = storage_url(storage)
    import sqlalchemy.exc

    try:
        study = optuna.create_study(
            study_name=name,
            storage=_open_storage(storage),
            direction="maximize" if maximise else "minimize",
            sampler=optuna.samplers.TPESampler(seed=seed),
            load_if_exists=True,
        )
    except (sqlalchemy.exc.SQLAlchemyError, ImportError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"cannot open the tuning storage {storage!r}: {first}") from None

    if not study.trials:
        # The first trial is the system's defaults (where inside the space), so the
        # result is never worse on the training part than not tuning at all.
        defaults = (get_history_system(system).params() if history else
                    SYSTEMS[system][0].from_params(dict(SYSTEMS[system][1])).params())
        start = {k: float(defaults[k]) for k, p in space.items()
                 if isinstance(defaults.get(k), int | float)
                 and p.low <= float(defaults[k]) <= p.high}
        if len(start) == len(space):
            study.enqueue_trial(start)

    def run(trial: optuna.Trial) -> float:
        params = {
            k: trial.suggest_float(k, p.low, p.high, log=p.log) for k, p in space.items()
        }
        try:
            res: EvalResult
            if history:
                res = evaluate_causal(train, system, params={**fixed, **params},
                                      train_contests=0, min_history=min_history,
                                      extended=False, refit_every=refit_every,
                                      update_between=update_between)
            else:
                res = evaluate(train, system, params={**fixed, **params},
                               train_contests=0, min_history=min_history, extended=False,
                               warmup=False)
        except failures as exc:
            trial.set_user_attr("failed", str(exc))
            return math.nan  # optuna records the trial as failed and goes on

        value = res.metrics.get(objective, math.nan)
        if math.isnan(value):
            what = (f"no contest has two players with {min_history}+ earlier contests"
                    if objective in ("pair_inv", "rank_dev") else
                    f"no contest has two teams whose members all have {min_history}+ "
                    "earlier contests" if objective.startswith("team_") else
                    f"no two-team contest has members who all have {min_history}+ "
                    "earlier contests")
            raise ConfigError(
                f"the training contests give no {objective} score ({what}); use a larger "
                f"--train-frac or a smaller --min-history"
            )
        return float(value)

    def after(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
        if callback is not None and trial.value is not None:
            try:
                best = float(study.best_value)
            except ValueError:  # no trial has completed yet
                best = math.nan
            callback(trial.number, float(trial.value), dict(trial.params), best)

    study.optimize(run, n_trials=trials, timeout=timeout, callbacks=[after],
                   catch=())
    try:
        best = study.best_trial
    except ValueError:
        reasons = {t.user_attrs.get("failed", "") for t in study.trials} - {""}
        raise ConvergenceError(
            f"every trial of study {name!r} failed: {'; '.join(sorted(reasons)[:3])}"
        ) from None
    return TuneResult(
        system=system,
        objective=objective,
        best_params={**fixed, **best.params},
        best_value=float(best.value if best.value is not None else math.nan),
        trials=len(study.trials),
        train_contests=n_train,
        study_name=name,
        storage=storage or ":memory:",
    )
