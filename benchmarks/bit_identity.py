"""Before/after bit-identity check of every rating system.

Rates a few histories with every system in :data:`podium.systems.SYSTEMS` and
stores, per (history, system), every array a user or the store can see: the
ratings table, the event log (mu, sigma, performance, place) and the full
``Rater`` image that checkpoints and store snapshots are made of.  Run it with
``--save DIR`` on the commit before a refactor and with ``--check DIR`` after
it; ``--check`` reports every array that differs in even one bit, or that the
new image lacks (an entry only the new image has is listed as new, not a difference).

    python benchmarks/bit_identity.py --save /tmp/before
    # ... change the code ...
    python benchmarks/bit_identity.py --check /tmp/before

Histories: a synthetic one with ties and partial participation (seed 002's
model), a synthetic team history (every system with a team rule; a system that
refuses team rounds records its refusal), and the first ``--cf N`` contests of the
shared Codeforces snapshot when it is found (``PODIUM_DATA_DIR`` or
``../shared/datasets`` from the checkout).

Besides the ratings, events and checkpoint image, each image holds:

* ``explain.*``: the JSON of :meth:`Rater.explain` for three players (first, middle,
  last) of three contests of the history (every float written as its shortest
  round-trip text, so equal text is equal bits);
* ``store.*`` (synthetic history only, ``--store``, on by default): every row of every
  table of a SQLite store that ingested the history in batches and one contest at a
  time, without the wall-clock columns and the store's random id.

A parameter a system gained after the saved images (one of its
``params_added_later``, e.g. ``all_tied``) appears in the new images' recorded
parameters (the checkpoint's ``meta``, the store's ``meta`` row and snapshots) and not
in the saved ones: ``--check`` compares those entries without it and lists it as a new
parameter with its value, as it lists new entries -- the numbers are compared bit for
bit all the same.  (Saved ratings without it are read with the earlier behaviour,
``podium.systems.saved_params``; whether that matters for a history is a question of
its contests, e.g. a draw for ``all_tied``.)
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _report import data_dir

from podium import Rater
from podium.errors import PodiumError
from podium.io import load_contests, synthetic_contests
from podium.io.synthetic_teams import synthetic_team_contests
from podium.systems import SYSTEMS


def histories(cf: int) -> dict[str, list]:
    out = {
        "synthetic": synthetic_contests(
            400, 25, seed=7, participation=0.6, tie_resolution=25.0
        ),
        "teams": list(synthetic_team_contests(120, 20, teams_per_round=6, max_size=3,
                                              partial_prob=0.3, seed=3).contests),
    }
    tar = data_dir() / "codeforces" / "cache_codeforces.tar.gz"
    if cf > 0 and tar.exists():
        out["codeforces"] = load_contests(tar, limit=cf).contests
    return out


def image(rater: Rater) -> dict[str, np.ndarray]:
    """Every array of the rater: ratings, events and the checkpoint image."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bitid-{os.getpid()}.npz"
    rater.save(str(path))
    with np.load(path, allow_pickle=False) as z:
        arrays = {f"ckpt.{k}": z[k] for k in z.files}
    path.unlink()
    df = rater.ratings()
    for col in df.columns:
        arrays[f"ratings.{col}"] = np.asarray(df[col].astype(str) if col == "handle"
                                              else df[col])
    ev = rater.events_frame()
    for col in ("contest_index", "mu", "sigma", "perf", "place"):
        arrays[f"events.{col}"] = ev[col].to_numpy()
    return arrays


def explanations(sname: str, contests: list) -> dict[str, np.ndarray]:
    """The JSON of three players' explanations at three contests (or the refusal)."""
    out: dict[str, np.ndarray] = {}
    picks = sorted({3, len(contests) // 2, len(contests) - 1})
    r = Rater(sname)
    done = 0
    for k in picks:
        r.extend(contests[done:k])
        done = k
        handles = contests[k].handles
        for pos in sorted({0, len(handles) // 2, len(handles) - 1}):
            try:
                doc = json.dumps(r.explain(contests[k], handles[pos]).to_dict(),
                                 allow_nan=True, default=_plain)
            except Exception as exc:  # noqa: BLE001 - the refusal is part of the image
                doc = f"{type(exc).__name__}: {exc}"
            out[f"explain.{k}.{pos}"] = np.array(doc)
    return out


def _plain(obj: object) -> object:
    """A NumPy scalar as the Python value it holds (exact); anything else as its repr."""
    return obj.item() if isinstance(obj, np.generic) else repr(obj)


def _explain_text(text: np.ndarray) -> np.ndarray:
    """An explanation's JSON as images hold it now: images written before 2026-11-27
    spelled a NumPy boolean (``Equation.holds`` of some systems) as its repr
    (``"np.True_"``), which the explanation now gives as a JSON boolean."""
    s = str(text).replace('"np.True_"', "true").replace('"np.False_"', "false")
    return np.array(s)


def store_image(sname: str, contests: list) -> dict[str, np.ndarray]:
    """Every row of a SQLite store that ingested ``contests`` (half in one batch, the
    rest one by one), as text, without wall-clock times and the random store id."""
    from sqlalchemy import select

    from podium.store import Store
    from podium.store import schema as S
    from podium.store.engine import make_engine

    out: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/s.db"
        try:
            with Store.create(url, sname, snapshot_every=7, allow_future=True) as store:
                half = len(contests) // 2
                store.ingest_many(contests[:half])
                for c in contests[half:]:
                    store.ingest(c)
        except PodiumError as exc:
            return {"store.error": np.array(f"{type(exc).__name__}: {exc}")}
        eng = make_engine(url)
        try:
            with eng.connect() as conn:
                for t in S.metadata.sorted_tables:
                    cols = [c.name for c in t.columns]
                    skip = {"ingested_at", "created_at", "time"} & set(cols)
                    rows = conn.execute(select(t).order_by(*t.primary_key.columns)).all()
                    text = []
                    for row in rows:
                        d = {c: v for c, v in zip(cols, row, strict=True) if c not in skip}
                        if t.name == "meta" and d.get("key") in ("store_id", "created_at"):
                            continue
                        text.append(repr(sorted(d.items())))
                    out[f"store.{t.name}"] = np.array(text if text else [""])
        finally:
            eng.dispose()
    return out


def run(cf: int, systems: list[str], store: bool = True) -> dict[str, dict[str, np.ndarray]]:
    result = {}
    for hname, contests in histories(cf).items():
        for sname in systems:
            r = Rater(sname)
            try:
                r.extend(contests)
            except PodiumError as exc:  # e.g. elo-average on large rounds: compare the refusal
                result[f"{hname}__{sname}"] = {"error": np.array(str(exc))}
                print(f"{hname:10s} {sname:14s} refused: {exc}"[:120], file=sys.stderr)
                continue
            img = image(r)
            img.update(explanations(sname, contests))
            if store and hname == "synthetic":
                img.update(store_image(sname, contests))
            result[f"{hname}__{sname}"] = img
            print(f"{hname:10s} {sname:14s} {r.num_players:6d} players", file=sys.stderr)
    return result


#: The logistic-factor pool of Elo-MMR and Elo-R: slots outside the players' live
#: ranges are spare capacity (uninitialised memory before 2026-11-24), not state.
_POOL = ("ckpt.state.f_mu", "ckpt.state.f_warg", "ckpt.state.f_wout")


def _live_pool_slots(img: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For the factor-pool arrays of an image, a mask of the slots that hold live factors."""
    if not all(k in img for k in (*_POOL, "ckpt.state.fb_base", "ckpt.state.fb_start",
                                  "ckpt.state.fb_len")):
        return {}
    size = img[_POOL[0]].shape[0]
    mask = np.zeros(size, dtype=bool)
    first = img["ckpt.state.fb_base"] + img["ckpt.state.fb_start"]
    for a, n in zip(first.tolist(), img["ckpt.state.fb_len"].tolist(), strict=True):
        mask[a:a + n] = True
    return dict.fromkeys(_POOL, mask)


def _same(a: np.ndarray, b: np.ndarray, mask: np.ndarray | None = None) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if mask is not None:
        a, b = a[mask], b[mask]
    if a.dtype.kind == "f":
        return bool(np.array_equal(a.view(np.uint8), b.view(np.uint8)))
    return bool(np.array_equal(a, b))


def _later_params() -> set[str]:
    """The parameters some system added later (``params_added_later``)."""
    return {k for cls, _, _ in SYSTEMS.values() for k in cls.params_added_later}


def _drop_params(meta: dict[str, Any], saved: dict[str, Any], later: set[str],
                 found: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (an image's metadata) without the later-added parameters that the saved
    metadata lacks; those go into ``found``."""
    params = meta.get("params")
    old = saved.get("params")
    if not isinstance(params, dict) or not isinstance(old, dict):
        return meta
    extra = {k: v for k, v in params.items() if k in later and k not in old}
    found.update(extra)
    return {**meta, "params": {k: v for k, v in params.items() if k not in extra}}


def _meta_row_params(text: str) -> dict[str, Any] | None:
    """The parameters of a ``store.meta`` row that holds them (else ``None``)."""
    row = dict(ast.literal_eval(text))
    return json.loads(row["value"]) if row.get("key") == "params" else None


def _snapshot_arrays(text: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A ``store.snapshots`` row: its columns but the data, and the data's arrays."""
    row = dict(ast.literal_eval(text))
    with np.load(io.BytesIO(row.pop("data")), allow_pickle=False) as z:
        return row, {k: z[k] for k in z.files}


def _same_images(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return sorted(a) == sorted(b) and all(_same(a[k], b[k]) for k in a)


def without_later_params(saved: dict[str, np.ndarray], new: dict[str, np.ndarray]
                         ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``new`` with the later-added parameters the saved image lacks taken out of its
    recorded parameters (checkpoint meta, store meta row, snapshots; every other bit
    as it is), and those parameters with their values."""
    later = _later_params()
    found: dict[str, Any] = {}
    out = dict(new)
    if "ckpt.meta" in new and "ckpt.meta" in saved:
        m_new = json.loads(bytes(new["ckpt.meta"]).decode("utf-8"))
        m_old = json.loads(bytes(saved["ckpt.meta"]).decode("utf-8"))
        m = _drop_params(m_new, m_old, later, found)
        if m is not m_new:
            out["ckpt.meta"] = np.frombuffer(json.dumps(m, allow_nan=True).encode("utf-8"),
                                             dtype=np.uint8)
    if "store.meta" in new and "store.meta" in saved:
        old_params = next((p for t in saved["store.meta"].tolist()
                           if (p := _meta_row_params(t)) is not None), None)
        rows = []
        for t in new["store.meta"].tolist():
            p = _meta_row_params(t)
            if p is not None and old_params is not None:
                p = _drop_params({"params": p}, {"params": old_params}, later, found)["params"]
                t = repr(sorted({"key": "params", "value": json.dumps(
                    p, allow_nan=True, sort_keys=True)}.items()))
            rows.append(t)
        out["store.meta"] = np.array(rows)
    if "store.snapshots" in new and "store.snapshots" in saved and \
            new["store.snapshots"].shape == saved["store.snapshots"].shape:
        rows = []
        for t_new, t_old in zip(new["store.snapshots"].tolist(),
                                saved["store.snapshots"].tolist(), strict=True):
            (c_new, a_new), (c_old, a_old) = _snapshot_arrays(t_new), _snapshot_arrays(t_old)
            m_new = json.loads(bytes(a_new["meta"]).decode("utf-8"))
            m_old = json.loads(bytes(a_old["meta"]).decode("utf-8"))
            m = _drop_params(m_new, m_old, later, found)
            a_new["meta"] = np.frombuffer(json.dumps(m, allow_nan=True).encode("utf-8"),
                                          dtype=np.uint8)
            # the row is the saved one when its arrays and its columns are (its ``size``,
            # the blob's length, follows the recorded parameters)
            c_new.pop("size", None)
            c_old.pop("size", None)
            rows.append(t_old if c_new == c_old and _same_images(a_new, a_old) else t_new)
        out["store.snapshots"] = np.array(rows)
    return out, found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", type=Path, help="write the images to this directory")
    g.add_argument("--check", type=Path, help="compare with images saved here")
    ap.add_argument("--cf", type=int, default=60, help="Codeforces contests (0: none)")
    ap.add_argument("--systems", default="", help="comma-separated subset (default: all)")
    ap.add_argument("--no-store", action="store_true", help="leave out the store images")
    args = ap.parse_args(argv)
    systems = [s for s in args.systems.split(",") if s] or list(SYSTEMS)
    result = run(args.cf, systems, store=not args.no_store)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for key, arrays in result.items():
            np.savez(args.save / f"{key}.npz", **arrays)
        print(f"saved {len(result)} images to {args.save}")
        return 0
    bad = 0
    for key, arrays in result.items():
        path = args.check / f"{key}.npz"
        if not path.exists():
            print(f"NEW   {key} (no saved image)")
            continue
        with np.load(path, allow_pickle=True) as z:  # our own file: handles are objects
            saved = {k: z[k] for k in z.files}
        live = _live_pool_slots(saved)
        saved = {k: _explain_text(v) if k.startswith("explain.") else v
                 for k, v in saved.items()}
        arrays, later = without_later_params(saved, arrays)
        diffs = [k for k in sorted(set(saved) | set(arrays))
                 if k not in arrays
                 or (k in saved and not _same(saved[k], arrays[k], live.get(k)))]
        # an entry the baseline lacks is a new field of the image (e.g. the event
        # log's team column): reported, not a difference of the saved numbers
        added = sorted(set(arrays) - set(saved))
        note = f"; new entries: {', '.join(added)}" if added else ""
        if later:
            note += "; new parameter(s): " + ", ".join(f"{k}={v!r}" for k, v in later.items())
        if diffs:
            bad += 1
            print(f"DIFF  {key}: {', '.join(diffs)}{note}")
        else:
            print(f"same  {key} ({len(arrays) - len(added)} arrays{note})")
    print(f"{len(result) - bad} of {len(result)} images bit-identical")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
