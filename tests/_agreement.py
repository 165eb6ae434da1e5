"""Agreement with elo-mmr-py 2.0.0 (the Rust reference's bindings): one assertion for
every system, with the tolerances that docs/systems.md and the README state.

Both sides must rate exactly the same set of players; then every player's final mu
and sigma must lie within the system's tolerance of the reference (NaN never passes).
Each check records the largest deviations it saw; ``tests/conftest.py`` prints them at
the end of the run, so that ``pytest tests/test_reference_agreement.py ...`` measures
what the tolerances below must cover.

Tolerances (rating points, mu and sigma alike), and the largest deviations measured
on random histories and on the first 100 Codeforces contests (docs/systems.md,
"Agreement with the reference", has the table and the command):

* ``mmr``, ``mmr-simple``, ``mmr-inf``, ``cfsys``, ``glicko``, ``bar``: 1e-8 (measured
  at most 1.4e-10: mmr-inf and cfsys on Codeforces; the others at most 4e-11);
* ``mmx``: 1e-7 (measured 2.2e-8 in mu on every kind of history; sigma agrees to
  1e-13);
* ``tcsys``: 1e-7 (measured 2.9e-8 in mu and 1.1e-8 in the volatility);
* ``trueskill``: 0, bit for bit;
* ``mmr-fast``, ``mmx-fast``: 1e-6 for every player (their subsampling of 100 merged
  terms is deterministic and the same as the reference's; measured as their exact
  counterparts, at most 2.2e-8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from podium import Rater

TOLERANCE: dict[str, float] = {
    "mmr": 1e-8, "mmr-simple": 1e-8, "mmr-inf": 1e-8, "cfsys": 1e-8, "glicko": 1e-8,
    "bar": 1e-8, "mmx": 1e-7, "tcsys": 1e-7, "trueskill": 0.0,
    "mmr-fast": 1e-6, "mmx-fast": 1e-6,
}

#: (system, case) -> [largest |dmu|, largest |dsigma|, comparisons, players compared]
OBSERVED: dict[tuple[str, str], list[float]] = {}

#: (file name, matched, total) of each official Codeforces contest replayed
#: (tests/test_replay.py); printed at the end of the run as well.
REPLAYED: list[tuple[str, int, int]] = []


def _record(system: str, case: str, dmu: np.ndarray, dsig: np.ndarray) -> None:
    row = OBSERVED.setdefault((system, case), [0.0, 0.0, 0, 0])
    if dmu.size:
        row[0] = max(row[0], float(np.max(dmu)))
        row[1] = max(row[1], float(np.max(dsig)))
    row[2] += 1
    row[3] += int(dmu.size)


def deviations(r: Rater, ref: dict[str, Any], system: str) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Podium's and the reference's (mu, sigma) per player, after checking that both
    rate exactly the same players."""
    df = r.ratings(sort=False)
    handles = [str(h) for h in df["handle"]]
    mine, theirs = set(handles), set(ref)
    assert len(mine) == len(handles), f"{system}: a handle is rated twice"
    assert mine == theirs, (
        f"{system}: different sets of rated players: {len(mine)} by podium, "
        f"{len(theirs)} by the reference; only podium: {sorted(mine - theirs)[:5]}, "
        f"only the reference: {sorted(theirs - mine)[:5]}"
    )
    mu = df["mu"].to_numpy(dtype=np.float64)
    sig = df["sigma"].to_numpy(dtype=np.float64)
    rmu = np.array([ref[h].mu for h in handles], dtype=np.float64)
    rsig = np.array([ref[h].sig for h in handles], dtype=np.float64)
    return mu, sig, rmu, rsig, handles


def assert_agrees(r: Rater, ref: dict[str, Any], system: str, *, case: str = "random",
                  tol: float | None = None) -> None:
    """Every player's mu and sigma within ``tol`` (default: the system's entry of
    :data:`TOLERANCE`) of the reference; 0 means bit for bit."""
    limit = TOLERANCE[system] if tol is None else tol
    mu, sig, rmu, rsig, handles = deviations(r, ref, system)
    dmu, dsig = np.abs(mu - rmu), np.abs(sig - rsig)
    _record(system, case, dmu, dsig)
    for name, got, want, d in (("mu", mu, rmu, dmu), ("sigma", sig, rsig, dsig)):
        bad = np.flatnonzero(~(d <= limit)) if limit > 0 else np.flatnonzero(
            got.view(np.int64) != want.view(np.int64))
        if bad.size:
            k = int(bad[np.argmax(np.nan_to_num(d[bad], nan=np.inf))])
            raise AssertionError(
                f"{system} ({case}): {bad.size} of {len(handles)} players' {name} differ "
                f"from the reference by more than {limit:g}; worst {handles[k]!r}: "
                f"podium {got[k]!r}, reference {want[k]!r} (|difference| {d[k]:.3g})"
            )


def summary_lines() -> list[str]:
    """The table printed at the end of a run: largest deviations per system and case."""
    if not OBSERVED:
        return []
    lines = [f"{'system':<11} {'case':<22} {'checks':>6} {'players':>9} "
             f"{'max |dmu|':>10} {'max |dsig|':>10} {'tolerance':>9}"]
    for (system, case), (dmu, dsig, n, players) in sorted(OBSERVED.items()):
        lines.append(f"{system:<11} {case:<22} {int(n):>6} {int(players):>9} "
                     f"{dmu:>10.3g} {dsig:>10.3g} {TOLERANCE.get(system, float('nan')):>9.3g}")
    return lines
