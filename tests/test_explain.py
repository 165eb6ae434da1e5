"""Explaining a rating change (podium.core.explain, RatingSystem.explain, Rater.explain,
Store.explain).

Every explanation is checked against the rating the round actually produced (the
Rater after ``add``, the store's events), bit for bit, and every equation's terms are
checked to add up to its target within the stated tolerance -- and the checks are
shown to be able to fail.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from podium import Contest, Rater
from podium.core.explain import ExplainError, Explanation, Term, format_explanation, top_terms
from podium.io import synthetic_contests
from podium.store import Store, StoreError
from podium.store.explain import ExplainNotFound
from podium.systems import SYSTEMS

#: Every named system (the explanation of each must at least reproduce the update).
ALL_SYSTEMS = sorted(SYSTEMS)
#: Systems whose explanation breaks the update into terms, and the equations it has.
EQUATIONS = {
    "mmr": {"diffusion", "performance", "rating", "uncertainty"},
    "mmr-fast": {"diffusion", "performance", "rating", "uncertainty"},
    "mmx": {"diffusion", "performance", "rating", "uncertainty"},
    "mmx-fast": {"diffusion", "performance", "rating", "uncertainty"},
    "mmr-inf": {"diffusion", "performance", "rating", "uncertainty"},
    "codeforces": {"seed", "change"},
    "cfsys": {"rating"},
    "glicko": {"change"},
    "bar": {"change"},
    "elo-single": {"change"},
    "glicko2p": {"change"},
    "tcsys": {"expected rank", "rating"},
    "elosrm": {"change"},
    "srmfix": {"change"},
    "openskill-tm": {"change"},
    "openskill-bt": {"change"},
    "openskill-tmp": {"change"},
    "openskill-btp": {"change"},
}


def _history(n_players: int = 60, rounds: int = 8, seed: int = 3) -> list[Contest]:
    return synthetic_contests(n_players, rounds, participation=0.6, tie_resolution=40.0,
                              seed=seed)


def _check(e: Explanation, rater_after: Rater, handle: str) -> None:
    """The explanation reproduces the round and its sums hold."""
    assert (e.mu_after, e.sigma_after) == rater_after.rating(handle)
    assert math.isclose(e.display_before + e.change, e.display_after, rel_tol=0,
                        abs_tol=1e-9 * max(1.0, abs(e.display_after)))
    for eq in e.equations:
        assert eq.holds, (e.system, eq)
        assert eq.total == pytest.approx(sum(t.value for t in e.terms_of(eq.name)), abs=1e-12)


@pytest.mark.parametrize("system", ALL_SYSTEMS)
def test_every_system_reproduces_the_update(system: str) -> None:
    # AverageElo averages over every ordering of a round's games: rounds of <= 5 players
    hist = _history() if system != "elo-average" else synthetic_contests(5, 6, seed=3)
    before = Rater(system)
    before.extend(hist[:-1])
    after = Rater(system)
    after.extend(hist)
    last = hist[-1]
    for handle in last.handles[::3]:
        e = before.explain(last, handle)
        assert e.system == SYSTEMS[system][0].name
        assert e.player == handle and e.participants == len(last)
        _check(e, after, handle)
        want = EQUATIONS.get(system)
        if want is not None:
            assert {eq.name for eq in e.equations} == want
            assert e.performance is not None
        # the JSON form is plain JSON (no NumPy scalar anywhere: the API serves it)
        json.loads(json.dumps(e.to_dict(), allow_nan=False))
    # the Rater was not changed by explaining
    assert before.contests_processed == len(hist) - 1
    before.add(last)
    assert before.ratings().equals(after.ratings())


def test_elo_mmr_performance_terms() -> None:
    """The performance equation has one term per participant, its own a tie term; wins
    push up, losses down; the terms vanish at p within PERF_TOLERANCE points."""
    from podium.systems.elo_mmr.explain import PERF_TOLERANCE

    hist = _history(80, 6)
    r = Rater("mmr")
    r.extend(hist[:-1])
    last = hist[-1]
    k = len(last) // 2
    e = r.explain(last, last.handles[k])
    q = e.equation("performance")
    terms = e.terms_of("performance")
    assert len(terms) == len(last)
    assert q.at == e.performance and q.slope is not None and q.slope < 0
    assert abs(q.total / q.slope) <= PERF_TOLERANCE
    kinds = {t.source: t.kind for t in terms}
    assert kinds[last.handles[k]] == "self"
    for t in terms:
        if t.kind == "beat":
            assert t.value > 0
        if t.kind == "lost":
            assert t.value < 0
    up, down = e.top("performance", 3)
    assert all(t.value > 0 for t in up) and all(t.value < 0 for t in down)
    assert [t.value for t in up] == sorted((t.value for t in up), reverse=True)
    assert up[0].value == max(t.value for t in terms)
    # the rating: prior + one factor per rated round, the newest this contest
    rating = e.terms_of("rating")
    assert rating[0].kind == "prior" and rating[-1].kind == "new"
    assert len(rating) == 1 + int(e.quantities["rounds_before"]) + 1
    assert 0 < e.quantities["evidence_share"] < 1
    # sigma: Eq. 8 and the diffusion add up
    assert e.quantities["sigma_diffused"] > e.sigma_before
    assert e.sigma_after < e.quantities["sigma_diffused"]


def test_elo_mmr_subsampled_window() -> None:
    """mmr-fast explains the window of merged terms its solver saw: fewer terms than
    participants, and they vanish at p (the full field would not)."""
    hist = synthetic_contests(300, 4, participation=1.0, seed=9)
    r = Rater("mmr-fast")
    r.extend(hist[:-1])
    last = hist[-1]
    e = r.explain(last, last.handles[150])
    terms = e.terms_of("performance")
    assert len(terms) <= 101 < len(last)  # the window: 50 either side of a middle term
    assert sum(t.detail["members"] for t in terms) <= len(last)
    assert e.equation("performance").holds


def test_elo_mmr_compiled_rounds_and_capped_performance() -> None:
    """Small rounds after 32 contests go through the compiled loop; the explanation
    still matches bit for bit.  A performance capped at the ceiling is reported."""
    hist = synthetic_contests(20, 40, participation=0.5, seed=4)
    hist[-1] = Contest.from_arrays(hist[-1].handles, hist[-1].lo, hist[-1].hi,
                                   name="capped", time_seconds=hist[-1].time_seconds,
                                   perf_ceiling=1500.0)
    before = Rater("mmr")
    before.extend(hist[:-1])
    after = Rater("mmr")
    after.extend(hist)
    winner = hist[-1].handles[0]
    e = before.explain(hist[-1], winner)
    _check(e, after, winner)
    assert e.performance == 1500.0 < e.quantities["performance_solved"]
    assert any("capped" in n for n in e.notes)


def test_codeforces_change_adds_up_exactly() -> None:
    hist = _history(50, 6)
    before = Rater("codeforces")
    before.extend(hist[:-1])
    after = Rater("codeforces")
    after.extend(hist)
    last = hist[-1]
    for h in last.handles:
        e = before.explain(last, h)
        ch = e.terms_of("change")
        assert [t.kind for t in ch] == ["raw", "correction", "correction"]
        assert sum(t.value for t in ch) == e.mu_after - e.mu_before == e.change
        assert e.quantities["seed"] == pytest.approx(
            1 + sum(t.value for t in e.terms_of("seed")), abs=1e-8)
        assert len(e.terms_of("seed")) == len(last) - 1
        assert e.quantities["needed_rating"] == e.performance
        assert -10 <= e.quantities["correction_2"] <= 0


def test_codeforces_2020_display_bonus() -> None:
    hist = _history(30, 3)
    r = Rater("codeforces", scheme="2020")
    r.extend(hist[:-1])
    e = r.explain(hist[-1], hist[-1].handles[0])
    kinds = [t.kind for t in e.terms_of("change")]
    assert "bonus" in kinds
    assert sum(t.value for t in e.terms_of("change")) == e.change


def test_team_round_is_not_broken_into_terms() -> None:
    teams = [("red", 0, 0, ["a", "b"]), ("blue", 1, 1, ["c", "d"]), ("green", 2, 2, ["e"])]
    c = Contest.from_teams(teams, name="teams")
    for system in ("mmr", "codeforces", "glicko"):
        before = Rater(system)
        after = Rater(system)
        after.add(c)
        e = before.explain(c, "c")
        assert e.equations == [] and e.terms == []
        assert any("team round" in n for n in e.notes)
        assert (e.mu_after, e.sigma_after) == after.rating("c")


def test_explain_errors() -> None:
    r = Rater("mmr")
    c = Contest([("a", 0, 0), ("b", 1, 1)], name="x")
    with pytest.raises(ExplainError, match="'zed' is not in contest 'x'"):
        r.explain(c, "zed")
    tied = Contest([("a", 0, 1), ("b", 0, 1)], name="tie")
    with pytest.raises(ExplainError, match=r"not rated \(everybody tied\)"):
        Rater("mmr", all_tied="skip").explain(tied, "a")
    assert r.explain(tied, "a").mu_after == 1500.0  # a draw of equals, rated
    with pytest.raises(ExplainError, match=r"not rated \(one side only\)"):
        r.explain(Contest([("a", 0, 0)], name="alone"), "a")
    with pytest.raises(TypeError):
        r.explain("x", "a")  # type: ignore[arg-type]


def test_equation_check_can_fail() -> None:
    """A term left out breaks the sum: ``holds`` is not vacuous."""
    hist = _history(40, 4)
    r = Rater("glicko")
    r.extend(hist[:-1])
    e = r.explain(hist[-1], hist[-1].handles[0])
    eq = e.equation("change")
    terms = e.terms_of("change")
    biggest = max(terms, key=lambda t: abs(t.value))
    from podium.systems.base.explain import sum_equation

    broken = sum_equation("change", eq.formula, eq.reference,
                          [t for t in terms if t is not biggest], target=eq.target)
    assert not broken.holds


def test_to_dict_top_keeps_the_sums() -> None:
    hist = _history(80, 4)
    r = Rater("mmr")
    r.extend(hist[:-1])
    e = r.explain(hist[-1], hist[-1].handles[10])
    d = e.to_dict(top=3)
    perf = next(q for q in d["equations"] if q["name"] == "performance")
    listed = [t["value"] for t in d["terms"] if t["equation"] == "performance"]
    assert len(listed) == 6 and perf["omitted"] == perf["count"] - 6
    assert math.fsum(listed) + perf["omitted_total"] == pytest.approx(perf["total"], abs=1e-12)
    full = e.to_dict()
    assert len([t for t in full["terms"] if t["equation"] == "performance"]) == len(hist[-1])
    assert {"mu_before", "mu_after", "performance", "terms"} <= set(d)
    text = format_explanation(e, top=2)
    assert "pushing up most" in text and "holds" in text and e.player in text
    with pytest.raises(ValueError):
        e.to_dict(top=-1)


def test_top_terms_order() -> None:
    ts = [Term(str(v), "x", v, "q") for v in (0.5, -2.0, 3.0, -0.1, 0.0)]
    up, down = top_terms(ts, 2)
    assert [t.value for t in up] == [3.0, 0.5]
    assert [t.value for t in down] == [-2.0, -0.1]


# ---------------------------------------------------------------------- the store
@pytest.mark.parametrize("system", ["mmr", "codeforces", "trueskill"])
def test_store_explain_matches_events(store_url: str, system: str) -> None:
    """On SQLite and PostgreSQL: every player of a contest far from a snapshot, and
    one next to a snapshot; batch-ingested and single contests."""
    hist = synthetic_contests(18, 40, participation=0.6, tie_resolution=30.0, seed=2)
    with Store.create(store_url, system, snapshot_every=9) as store:
        store.ingest_many(hist[:25])
        for c in hist[25:]:
            store.ingest(c)
        ids = store.contest_ids()
        for pos in (0, 9, 17, 33, 39):
            view = store.contest(ids[pos])
            assert view is not None
            for ch in view.changes:
                e = store.explain(ids[pos], ch.handle)
                assert e.contest_id == ids[pos]
                assert (e.mu_after, e.sigma_after) == (ch.mu, ch.sigma)
                assert e.change == pytest.approx(ch.change, abs=1e-9)
                assert all(eq.holds for eq in e.equations)
        with pytest.raises(ExplainNotFound, match="unknown contest"):
            store.explain("no such contest", "p001")
        with pytest.raises(ExplainNotFound, match="is not in contest"):
            store.explain(ids[3], "nobody at all")


def test_store_explain_unrated_and_handles(store_url: str) -> None:
    with Store.create(store_url, "mmr", {"all_tied": "skip"},
                      case_insensitive_handles=True) as store:
        store.ingest(Contest([("Ann.B/1", 0, 0), ("bob", 1, 1)], name="c1",
                             url="https://x.org/c/1"), allow_future=True)
        store.ingest(Contest([("ann.b/1", 0, 1), ("bob", 0, 1)], name="c2",
                             time_seconds=2_000_000_000), allow_future=True)
        e = store.explain("https://x.org/c/1", "ANN.B/1")
        assert e.player == "Ann.B/1"
        with pytest.raises(ExplainNotFound, match="not rated"):
            store.explain("c2", "bob")


def test_store_explain_detects_a_disagreeing_event(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An event that the update does not reproduce is reported, never explained."""
    from sqlalchemy import update

    import podium.store.schema as S

    url = f"sqlite:///{tmp_path / 'x.db'}"
    hist = _history(20, 3)
    with Store.create(url, "mmr") as store:
        store.ingest_many(hist)
        cid = store.contest_ids()[2]
        h = store.contest(cid).changes[0].handle  # type: ignore[union-attr]
        with store.engine.begin() as conn:
            conn.execute(update(S.events).values(mu=S.events.c.mu + 1.0))
        with pytest.raises(StoreError, match="rated differently"):
            store.explain(cid, h)


@pytest.mark.parametrize("system", sorted(EQUATIONS))
def test_debut_explanations_add_up(system: str) -> None:
    """A debut (from the newcomer prior; EloSRM's debut term R_init(t) - prior)."""
    hist = _history(30, 3)
    fresh = Contest.from_arrays([*hist[-1].handles, "newbie"], [*hist[-1].lo, len(hist[-1])],
                                [*hist[-1].hi, len(hist[-1])], name="with a newcomer",
                                time_seconds=hist[-1].time_seconds)
    before = Rater(system)
    before.extend(hist[:-1])
    after = Rater(system)
    after.extend([*hist[:-1], fresh])
    e = before.explain(fresh, "newbie")
    assert e.debut
    _check(e, after, "newbie")


def test_rater_explain_newcomers_get_the_prior() -> None:
    r = Rater("mmr")
    c = Contest([("new1", 0, 0), ("new2", 1, 1)], name="first")
    e = r.explain(c, "new2")
    assert e.debut and (e.mu_before, e.sigma_before) == r.system.newcomer(c)
    assert np.isfinite(e.performance)


def test_trueskill_rating_is_prior_times_contest_message() -> None:
    """TrueSkill: the two weighted shares add up to the new mu, the precisions to the new
    precision, and the contest's message points above the prior for a winner."""
    rater = Rater("trueskill")
    rater.add(Contest([("a", 0, 0), ("b", 1, 1), ("c", 2, 2)], name="r1", time_seconds=1))
    e = rater.explain(Contest([("c", 0, 0), ("a", 1, 1), ("b", 2, 2)], name="r2",
                              time_seconds=2), "c")
    assert [eq.name for eq in e.equations] == ["rating", "precision"]
    assert all(eq.holds for eq in e.equations)
    rating = [t for t in e.terms if t.equation == "rating"]
    assert sum(t.value for t in rating) == pytest.approx(e.mu_after, rel=1e-13)
    assert sum(t.detail["weight"] for t in rating) == pytest.approx(1.0, rel=1e-12)
    assert e.quantities["message_mean"] > e.mu_before  # c won: the contest pulls up
    assert 0.0 < e.quantities["evidence_share"] < 1.0
