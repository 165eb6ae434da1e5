"""Checkpoints: exact resume, atomic writes, clear errors on bad files."""

from __future__ import annotations

import os

import numpy as np
import pytest

from podium import CheckpointError, Rater
from podium.io import synthetic_contests


@pytest.fixture(scope="module")
def history():
    return synthetic_contests(300, 12, seed=3, participation=0.7, tie_resolution=10.0)


@pytest.mark.parametrize("system", ["mmr", "mmr-fast", "mmx", "mmr-inf", "mmr-simple"])
def test_split_run_equals_one_run(tmp_path, history, system):
    params = {"max_history": 3, "subsample_size": 20} if system == "mmr-fast" else {}
    whole = Rater(system, **params)
    whole.extend(history)
    first = Rater(system, **params)
    first.extend(history[:5])
    path = tmp_path / "ck.npz"
    first.save(path)
    resumed = Rater.load(path)
    resumed.extend(history[5:])
    a = whole.ratings(sort=False)
    b = resumed.ratings(sort=False)
    assert list(a["handle"]) == list(b["handle"])
    for col in ("mu", "sigma", "display_rating", "contests", "max_display_rating"):
        np.testing.assert_array_equal(a[col].to_numpy(), b[col].to_numpy())
    ea, eb = whole.events_frame(), resumed.events_frame()
    np.testing.assert_array_equal(ea["perf"].to_numpy(), eb["perf"].to_numpy())
    assert resumed.contests_processed == whole.contests_processed
    assert resumed.history("p000").equals(whole.history("p000"))


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
