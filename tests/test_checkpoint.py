"""Checkpoints: exact resume, atomic writes, clear errors on bad files."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from podium import CheckpointError, Contest, Rater
from podium.core.state import EventLog
from podium.io import synthetic_contests
from podium.systems import SYSTEMS


@pytest.fixture(scope="module")
def history():
    return synthetic_contests(300, 12, seed=3, participation=0.7, tie_resolution=10.0)


#: Parameters that make the small history exercise a system's bounded memory.
SPLIT_PARAMS: dict[str, dict[str, object]] = {
    "mmr-fast": {"max_history": 3, "subsample_size": 2},
    "mmx-fast": {"subsample_size": 2},
    "elo-r-leading": {"max_history": 3},
    "elo-r-all": {"max_history": 3},
    "elo-r-fancy": {"max_history": 3},
}


def small_rounds(n_contests: int = 16, n_players: int = 12, seed: int = 11) -> list[Contest]:
    """Rounds of 2-5 players (every system accepts them, AverageElo included) with ties,
    some days apart, one of weight 2 and one in which everybody ties."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n_contests):
        size = int(rng.integers(2, 6))
        players = rng.choice(n_players, size=size, replace=False)
        places = np.ones(size, dtype=np.int64) if t == 7 else rng.integers(1, size + 1, size)
        out.append(Contest.from_places(
            [f"p{k}" for k in players], places, name=f"c{t}",
            time_seconds=86_400 * (3 * t + int(rng.integers(0, 3))),
            weight=2.0 if t == 9 else 1.0,
        ))
    return out


def _live_pool(image: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A factor pool's live factors only: the slack of each player's block is not state
    (compaction leaves it uninitialised)."""
    if "state.fb_base" not in image:
        return image
    live = np.concatenate([
        np.arange(b + s, b + s + n) for b, s, n in zip(
            image["state.fb_base"], image["state.fb_start"], image["state.fb_len"],
            strict=True)
    ] + [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    return {k: (v[live] if k in ("state.f_mu", "state.f_warg", "state.f_wout") else v)
            for k, v in image.items()}


def assert_same_image(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert sorted(a) == sorted(b)
    a, b = _live_pool(a), _live_pool(b)
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), k
        else:
            assert np.array_equal(x, y), k


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_split_run_equals_one_run(tmp_path, system):
    """Rate 0..k, save, load, rate k+1..n: bit for bit the numbers of one run (ratings,
    every event, and the image of the whole Rater, system state included)."""
    history = small_rounds()
    k = 6
    params = SPLIT_PARAMS.get(system, {})
    whole = Rater(system, **params)
    whole.extend(history)
    first = Rater(system, **params)
    first.extend(history[: k + 1])
    path = tmp_path / "ck.npz"
    first.save(path)
    resumed = Rater.load(path)
    assert resumed.system == first.system
    resumed.extend(history[k + 1:])
    a, b = whole.ratings(sort=False), resumed.ratings(sort=False)
    assert list(a["handle"]) == list(b["handle"])
    for col in a.columns[1:]:
        assert_same_image({col: a[col].to_numpy()}, {col: b[col].to_numpy()})
    ea, eb = whole.events_frame(), resumed.events_frame()
    assert list(ea["handle"]) == list(eb["handle"])
    assert_same_image({c: ea[c].to_numpy() for c in ea.columns[2:]},
                      {c: eb[c].to_numpy() for c in eb.columns[2:]})
    assert resumed.contests_processed == whole.contests_processed
    assert_same_image(whole.to_arrays(), resumed.to_arrays())


def test_rater_arrays_round_trip_and_event_sink():
    """``Rater.to_arrays``/``from_arrays`` without a file; a given sink is used as is."""
    r = Rater("mmr")
    r.extend(small_rounds(6))
    image = r.to_arrays(header={"format": "test", "version": 7})
    meta = json.loads(bytes(image["meta"]).decode("utf-8"))
    assert list(meta)[:4] == ["format", "version", "system", "params"]
    back = Rater.from_arrays(image)
    assert_same_image(image, back.to_arrays(header={"format": "test", "version": 7}))
    sink = EventLog()
    fresh = Rater.from_arrays(r.to_arrays(events=False), events=sink)
    assert fresh.events is sink and len(sink) == 0
    fresh.add(small_rounds(7)[6])
    assert len(sink) == len(small_rounds(7)[6])
    with pytest.raises(CheckpointError, match="here: checkpoint is damaged"):
        Rater.from_arrays({k: v for k, v in image.items() if k != "table.mu"}, where="here")
    with pytest.raises(CheckpointError, match="unknown rating system"):
        Rater.from_arrays({**image, "meta": np.frombuffer(
            json.dumps({**meta, "system": "nope"}).encode(), dtype=np.uint8)})


def test_failed_save_keeps_previous_checkpoint(tmp_path, history, monkeypatch):
    r = Rater("mmr")
    r.extend(history[:3])
    path = tmp_path / "ck.npz"
    r.save(path)
    before = path.read_bytes()
    r.extend(history[3:6])

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(OSError, match="disk full"):
        r.save(path)
    assert path.read_bytes() == before
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    assert Rater.load(path).contests_processed == 3


def test_bad_files(tmp_path):
    with pytest.raises(CheckpointError, match="not found"):
        Rater.load(tmp_path / "missing.npz")
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(CheckpointError, match="junk.npz"):
        Rater.load(junk)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.arange(3))
    with pytest.raises(CheckpointError, match="not a Podium checkpoint"):
        Rater.load(other)


def test_unknown_version(tmp_path, history):
    r = Rater("mmr")
    r.extend(history[:2])
    path = tmp_path / "ck.npz"
    r.save(path)
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    meta = bytes(data["meta"]).decode().replace('"version": 1', '"version": 99')
    data["meta"] = np.frombuffer(meta.encode(), dtype=np.uint8)
    np.savez(path, **data)
    with pytest.raises(CheckpointError, match="version 99"):
        Rater.load(path)


def test_truncated_file(tmp_path, history):
    r = Rater("mmr")
    r.extend(history[:2])
    path = tmp_path / "ck.npz"
    r.save(path)
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError):
        Rater.load(path)
