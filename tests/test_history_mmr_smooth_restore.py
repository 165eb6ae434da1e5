"""``mmr-smooth``'s stored residuals (the update's gate, docs/history.md "The gate")
survive ``SmoothState.to_arrays`` / ``restore``: an add after a restore, and every
``HistoryRater.add`` (which restores the previous fit's state into the state of the
longer history), is the add of the state kept in memory, bit for bit, the gate firing
in its first sweep; an image written before they were saved still restores."""

from __future__ import annotations

import numpy as np
import pytest
from test_history_mmr_smooth import model_history

from podium import Contest
from podium.errors import CheckpointError
from podium.history import ContestHistory, SmoothState, history_from_arrays, smooth_extend
from podium.history.mmr_smooth import smooth_result
from podium.history.sweeps import SweepReport
from podium.history_rater import HistoryRater

DAY = 86_400


def _wide_history(seed: int = 5, n_players: int = 400, n_rounds: int = 30,
                  n_small: int = 2, size: int = 3) -> ContestHistory:
    """Rounds of Elo-MMR's model (:func:`model_history`: about 70 % of the active
    players each), then ``n_small`` contests of ``size`` players of the last round:
    each changes few terms of the earlier rounds, so the update's gate leaves some of
    them as they are."""
    h, _ = model_history(seed, n_players=n_players, n_rounds=n_rounds)
    rng = np.random.default_rng(seed + 100)
    last = h.player[h.contest_rows[-2]:]
    ct, tr = h.contest_teams.tolist(), h.team_rows.tolist()
    place, player, days = h.team_place.tolist(), h.player.tolist(), h.time.tolist()
    for k in range(n_small):
        who = rng.choice(last, size, replace=False)
        player += who.tolist()
        place += list(range(size))
        tr += (tr[-1] + np.arange(1, size + 1)).tolist()
        ct.append(ct[-1] + size)
        days.append(days[-1] + 1.0 + k)
    return history_from_arrays(ct, tr, place, player, days, n_players=n_players)


def _contests(h: ContestHistory) -> list[Contest]:
    """The contests of ``h`` (players ``p<i>``, one place each)."""
    out = []
    for c in range(h.n_contests):
        r = slice(h.contest_rows[c], h.contest_rows[c + 1])
        out.append(Contest([(f"p{p}", k, k) for k, p in enumerate(h.player[r].tolist())],
                           name=f"c{c}", time_seconds=1_600_000_000 + int(h.time[c]) * DAY))
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint64) if a.dtype == np.float64 else a


def _assert_same_image(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(_bits(a[k]), _bits(b[k])), k


def _assert_same_state(a: SmoothState, b: SmoothState) -> None:
    """Every array of the images, and every stored residual (all rows), bit for bit."""
    _assert_same_image(a.to_arrays(), b.to_arrays())
    for x, y in zip(a.stored, b.stored, strict=True):
        assert np.array_equal(_bits(x), _bits(y))


def _add(st: SmoothState) -> list[SweepReport]:
    _, rep = smooth_extend(smooth_result(st, True, []), 1, tol=0.01, max_sweeps=3)
    assert not st.moved_rows.any()  # the transient flags: read and cleared by the update
    return rep.sweeps


def _counts(sweeps: list[SweepReport]) -> list[tuple[int, int, int, int]]:
    return [(s.players, s.rounds, s.rows_solved, s.rounds_gated) for s in sweeps]


@pytest.mark.parametrize("adds_before", [0, 1])
def test_an_add_after_restore_is_the_add_in_memory(adds_before: int) -> None:
    """A state restored from ``to_arrays`` (right after the full solve, or after an add:
    then some rows' stored cavities differ from the rounds') adds the next contest as
    the state it was taken from does, bit for bit, the gate leaving rounds in its
    first sweep.  Before the stored residuals were saved the restored state found none
    (no round gated in the first sweep) and its stored residuals differed."""
    h = _wide_history()
    a = SmoothState.start(h, window_tol=0.0)
    a.rate_forward(h.n_contests - 2)
    a.solve(0.01, 100)
    for _ in range(adds_before):
        _add(a)
    image = a.to_arrays()
    b = SmoothState.start(h, window_tol=0.0)
    b.restore(image)
    _assert_same_image(image, b.to_arrays())
    before = [[x.copy() for x in st.stored] for st in (a, b)]
    sweeps_a, sweeps_b = _add(a), _add(b)
    # (on main's code: no round gated in b's first sweep, more rows solved; the
    # performances happened to be the same, the stored residuals not)
    assert _counts(sweeps_a) == _counts(sweeps_b)
    assert sweeps_b[0].rounds_gated > 0
    _assert_same_state(a, b)
    for x, y in zip(*before, strict=True):  # the restore itself, every row
        assert np.array_equal(_bits(x), _bits(y))
    if adds_before:  # stored cavities that differ from the rounds' were listed
        assert image["stored.cav_rows"].size > 0


def test_history_rater_adds_gate_from_the_previous_fit(monkeypatch, tmp_path) -> None:
    """``HistoryRater.add`` of ``mmr-smooth`` restores the previous fit's state into the
    state of the longer history: its first sweep gates rounds, and so does an add
    after a checkpoint, with the same ratings and state bit for bit."""
    import podium.history.smooth_update as su

    gated: list[int] = []
    phase1 = su.phase1_moved

    def spy(state, contests, threshold):
        out = phase1(state, contests, threshold)
        gated.append(out.gated)
        return out

    monkeypatch.setattr(su, "phase1_moved", spy)
    contests = _contests(_wide_history())
    rater = HistoryRater("mmr-smooth")
    rater.extend(contests[:-2])
    rater.save(tmp_path / "ck.npz")
    resumed = HistoryRater.load(tmp_path / "ck.npz")
    runs = []
    for r in (rater, resumed):
        gated.clear()
        reports = [r.add(c) for c in contests[-2:]]
        runs.append((list(gated), [x.sweeps for x in reports]))
    assert runs[0] == runs[1]
    first_sweeps = [g[0] for g in np.split(np.array(runs[0][0]), np.cumsum(runs[0][1])[:-1])]
    assert min(first_sweeps) > 0
    _assert_same_image(rater.to_arrays(), resumed.to_arrays())


def test_an_image_without_stored_residuals_restores() -> None:
    """An image written before the stored residuals were saved loads with every row
    unevaluated (the gate off for them, nothing raised), and the add from it gates no
    round in its first sweep and stays within the propagation threshold of the add
    that had them; as a checkpoint it loads and adds too."""
    h = _wide_history()
    a = SmoothState.start(h, window_tol=0.0)
    a.rate_forward(h.n_contests - 1)
    a.solve(0.01, 100)
    old = {k: v for k, v in a.to_arrays().items() if not k.startswith("stored.")}
    b = SmoothState.start(h, window_tol=0.0)
    b.restore(old)
    r_end = b.rated_rows
    assert np.isnan(b.stored.perf[:r_end]).all()
    sweeps = _add(b)
    assert sweeps[0].rounds_gated == 0
    _add(a)
    np.testing.assert_allclose(b.entries.sm_mu, a.entries.sm_mu, rtol=0, atol=0.3)
    assert set(b.to_arrays()) == set(a.to_arrays())

    contests = _contests(h)
    rater = HistoryRater("mmr-smooth")
    rater.extend(contests[:-1])
    image = {k: v for k, v in rater.to_arrays().items() if not k.startswith("state.stored.")}
    resumed = HistoryRater.from_arrays(image)
    assert resumed.fit is not None and resumed.fit.state is not None
    assert np.isnan(resumed.fit.state.stored.perf).all()
    rep = resumed.add(contests[-1])
    assert not rep.skipped and np.isfinite(resumed.fit.mu).all()


@pytest.mark.parametrize("share", [0.1, 0.9])
def test_stored_residuals_listed_or_whole(share: float) -> None:
    """The stored cavities and performances that differ from the rounds' are listed by
    row when that is smaller, else saved whole; either restores bit for bit."""
    h = _wide_history(4, n_players=60, n_rounds=8)
    a = SmoothState.start(h, window_tol=0.0)
    a.rate_forward(h.n_contests)
    a.solve(0.01, 100)
    image = a.to_arrays()
    assert image["stored.cav_rows"].size == image["stored.perf_rows"].size == 0
    r_end = a.rated_rows
    rows = np.random.default_rng(1).random(r_end) < share
    a.stored.mu[:r_end][rows] += 1.0
    a.stored.perf[:r_end][rows] = np.nan
    image = a.to_arrays()
    assert ("stored.cav_rows" in image) == ("stored.perf_rows" in image) == (share < 0.5)
    b = SmoothState.start(h, window_tol=0.0)
    b.restore(image)
    _assert_same_state(a, b)


@pytest.mark.parametrize("damage", ["rows out of range", "short q", "values", "missing"])
def test_stored_residuals_that_do_not_fit_are_refused(damage: str) -> None:
    h = _wide_history(4, n_players=60, n_rounds=8)
    rater = HistoryRater("mmr-smooth")
    rater.extend(_contests(h))
    image = rater.to_arrays()
    n = image["state.stored.q"].size
    if damage == "rows out of range":
        image["state.stored.cav_rows"] = np.r_[image["state.stored.cav_rows"], n]
        for k in ("mu", "sig"):
            image[f"state.stored.{k}"] = np.r_[image[f"state.stored.{k}"], 0.0]
    elif damage == "short q":
        image["state.stored.q"] = image["state.stored.q"][:-1]
    elif damage == "values":
        image["state.stored.perf_rows"] = np.arange(3, dtype=np.int32)
    else:
        del image["state.stored.qp"]
    with pytest.raises(CheckpointError, match="damaged or inconsistent"):
        HistoryRater.from_arrays(image)
