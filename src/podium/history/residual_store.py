"""The stored residuals of ``mmr-smooth``'s update gate in a state's image: what
:meth:`~podium.history.smooth_state.SmoothState.to_arrays` writes of a
:class:`~podium.history._smooth_groups.StoredResiduals` and
:meth:`~podium.history.smooth_state.SmoothState.restore` reads back, bit for bit
(docs/history.md, "The stored residuals in ``to_arrays`` / ``restore``").

Per row, the tie group's ``Q_g`` and ``Q_g'`` (Theorem 3.2 of [EbtekarLiu2021]) as
they are; the cavities and performance they were taken at only on the rows where
these differ, bit for bit, from the round's current ones (the rows listed, or the
array whole when listing would not be smaller).  Plain NumPy: the kernels that use
the stored residuals are in :mod:`~podium.history._smooth_groups`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from podium.history._smooth_groups import StoredResiduals

__all__ = ["restore_residuals", "save_residuals"]


def _differs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where two float64 arrays differ bit for bit (a NaN equals only itself)."""
    return np.asarray(a, dtype=np.float64).view(np.uint64) != np.asarray(
        b, dtype=np.float64).view(np.uint64)


def _index_dtype(n: int) -> type[np.integer]:
    return np.int32 if n < 2**31 else np.int64


def _save_sparse(stored: list[np.ndarray], current: list[np.ndarray], r_end: int,
                 key: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``stored`` (rows ``0 .. r_end - 1``) where any differs bit for bit from
    ``current``: as the rows (``stored.<key>``) and their values, or whole when that is
    not larger (more than about 80 % of the rows listed)."""
    s = slice(0, r_end)
    rows = np.zeros(r_end, dtype=np.bool_)
    for x, y in zip(stored, current, strict=True):
        rows |= _differs(x[s], y[s])
    listed = np.flatnonzero(rows)
    index = _index_dtype(r_end)
    if listed.size * (np.dtype(index).itemsize + 8 * len(names)) >= 8 * len(names) * r_end:
        return {f"stored.{n}": x[s].copy() for n, x in zip(names, stored, strict=True)}
    out = {f"stored.{key}": listed.astype(index)}
    out.update({f"stored.{n}": x[listed] for n, x in zip(names, stored, strict=True)})
    return out


def save_residuals(store: StoredResiduals, perf: np.ndarray, cav_mu: np.ndarray,
                   cav_sig: np.ndarray, r_end: int) -> dict[str, np.ndarray]:
    """The stored residuals of rows ``0 .. r_end - 1`` as named arrays (a state's
    checkpoint, :meth:`~podium.history.smooth_state.SmoothState.to_arrays`).

    ``Q_g`` and ``Q_g'`` of every row (``stored.q``, ``stored.qp``).  The cavities they
    were taken at (``stored.mu``, ``stored.sig``) only on the rows (``stored.cav_rows``)
    where one of them differs, bit for bit, from the round's current ``cav_mu`` or
    ``cav_sig``, and the performance (``stored.perf``) only where it differs from
    ``perf`` (``stored.perf_rows``; ``NaN``: never evaluated, the team rounds' rows),
    each whole instead when listing the rows would not be smaller.  After the full
    solve (:meth:`~podium.history.smooth_state.SmoothState.refresh_residuals`) no
    individual round's row is listed; each update adds the rows whose cavities moved
    after their round's last evaluation (docs/history.md, "The gate": on the first 600
    Codeforces contests about a quarter of the rows after one add, four fifths after
    twenty).
    """
    out = {"stored.q": store.q[:r_end].copy(), "stored.qp": store.qp[:r_end].copy()}
    out.update(_save_sparse([store.mu, store.sig], [cav_mu, cav_sig], r_end, "cav_rows",
                            ("mu", "sig")))
    out.update(_save_sparse([store.perf], [perf], r_end, "perf_rows", ("perf",)))
    return out


def _load_sparse(arrays: dict[str, np.ndarray], r_end: int, key: str,
                 names: tuple[str, ...], base: tuple[str, ...]
                 ) -> tuple[np.ndarray | None, list[np.ndarray], list[np.ndarray]]:
    """Read :func:`_save_sparse`'s arrays: the listed rows (``None``: stored whole), the
    values and the image's current arrays they differ from.

    Raises
    ------
    ValueError
        When they do not fit; ``KeyError`` when some are missing.
    """
    values = [np.asarray(arrays[f"stored.{n}"]) for n in names]
    current = [np.asarray(arrays[b]) for b in base]
    if any(c.shape != (r_end,) for c in current):
        raise ValueError(f"{', '.join(base)} of {[c.size for c in current]} rows where the "
                         f"state has {r_end} rated rows")
    if f"stored.{key}" not in arrays:
        if any(v.shape != (r_end,) for v in values):
            raise ValueError(f"stored {', '.join(names)} of {[v.size for v in values]} rows "
                             f"where the state has {r_end} rated rows")
        return None, values, current
    rows = np.asarray(arrays[f"stored.{key}"])
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError(f"stored.{key} is not a list of row numbers ({rows.dtype}, "
                         f"shape {rows.shape})")
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= r_end
                      or np.unique(rows).size != rows.size):
        raise ValueError(f"stored.{key} lists rows out of 0 .. {r_end - 1} or twice")
    if any(v.shape != rows.shape for v in values):
        raise ValueError(f"stored.{key} lists {rows.size} rows but stored "
                         f"{', '.join(names)} have {[v.size for v in values]}")
    return rows, values, current


def restore_residuals(store: StoredResiduals, arrays: dict[str, np.ndarray],
                      r_end: int) -> None:
    """Load :func:`save_residuals` into rows ``0 .. r_end - 1`` of ``store``; the
    unlisted rows' cavities and performance are the image's ``rounds.cav_mu``,
    ``rounds.cav_sig`` and ``rounds.perf``.  An image without them (written before
    they were saved) leaves every row unevaluated (``perf`` NaN: the gate solves its
    round at the next visit, which stores them).

    Raises
    ------
    ValueError
        When they do not fit (not one ``q`` and ``qp`` per row, a listed row out of
        range or listed twice, not one value per listed row); nothing is written.
    KeyError
        When some of them are missing.
    """
    s = slice(0, r_end)
    if "stored.q" not in arrays:
        store.perf[s] = np.nan
        return
    q, qp = np.asarray(arrays["stored.q"]), np.asarray(arrays["stored.qp"])
    if q.shape != (r_end,) or qp.shape != (r_end,):
        raise ValueError(f"{q.size} and {qp.size} stored residuals where the state has "
                         f"{r_end} rated rows")
    parts = [_load_sparse(arrays, r_end, "cav_rows", ("mu", "sig"),
                          ("rounds.cav_mu", "rounds.cav_sig")),
             _load_sparse(arrays, r_end, "perf_rows", ("perf",), ("rounds.perf",))]
    store.q[s] = q
    store.qp[s] = qp
    for (rows, values, current), names in zip(parts, (("mu", "sig"), ("perf",)),
                                              strict=True):
        for name, v, c in zip(names, values, current, strict=True):
            out = getattr(store, name)
            if rows is None:
                out[s] = v
            else:
                out[s] = c
                out[rows] = v
