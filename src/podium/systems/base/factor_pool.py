"""Per-player beliefs made of one normal factor and a list of logistic factors.

Elo-MMR (:mod:`podium.systems.elo_mmr`) and Elo-R (:mod:`podium.systems.elo_r`) keep
the same bookkeeping: every player has a normal factor ``(nf_mu, nf_w)`` and a list of
logistic factors ``(f_mu, f_warg, f_wout)``, the lists of all players stored in one
shared pool of blocks (``fb_*``; see :func:`podium.systems.base.factor_pool_kernels.reserve`).
:class:`FactorPoolState` holds that bookkeeping once; a system's state subclasses it
and adds its own per-player arrays through ``EXTRA_FIELDS``.

The module lives in the systems' shared package (not :mod:`podium.core`) because it
subclasses :class:`~podium.systems.base.state.SystemState`; its kernels are
:mod:`podium.systems.base.factor_pool_kernels`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Self

import numpy as np
import numpy.typing as npt

from podium.core.state import grow
from podium.systems.base.state import SystemState

if TYPE_CHECKING:
    import podium.systems.base.factor_pool_kernels as PK

__all__ = ["FactorPoolState"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Capacity of a fresh (or freshly loaded, small) factor pool.
_MIN_POOL = 1024


class FactorPoolState(SystemState):
    """Struct-of-arrays beliefs: a normal factor and a pooled list of logistic factors.

    Parameters
    ----------
    mu_noob, sig_noob:
        Newcomer prior: a new player's normal factor is ``(mu_noob, 1 / sig_noob**2)``.

    Attributes
    ----------
    n : int
        Number of players (the first ``n`` rows of every per-player array are valid).
    nf_mu, nf_w : ndarray of float64
        Per player: the normal factor's mean and weight ``1/var``.
    fb_base, fb_cap, fb_start, fb_len : ndarray of int64
        Per player: the block ``[fb_base, fb_base + fb_cap)`` of the pool that holds its
        logistic factors, the live ones at ``fb_base + fb_start`` onwards (``fb_len`` of
        them, oldest first).
    f_mu, f_warg, f_wout : ndarray of float64
        The pool: each logistic factor's location, the weight inside its tanh and the
        weight in front of it (what they mean is up to the system).
    used : int
        Pool slots in use (``f_*[:used]``), abandoned blocks included.

    Notes
    -----
    A subclass lists its own per-player float arrays and their newcomer values in
    ``EXTRA_FIELDS``; they are grown, checkpointed and copied with the others.  The
    checkpoint keys (:meth:`to_arrays`) are the attribute names, plus ``"prior"``.
    """

    #: ``(name, newcomer value)`` of a subclass's extra per-player float arrays.
    EXTRA_FIELDS: ClassVar[tuple[tuple[str, float], ...]] = ()
    _NORMAL_FIELDS: ClassVar[tuple[str, ...]] = ("nf_mu", "nf_w")
    _BLOCK_FIELDS: ClassVar[tuple[str, ...]] = ("fb_base", "fb_cap", "fb_start", "fb_len")
    _POOL_FIELDS: ClassVar[tuple[str, ...]] = ("f_mu", "f_warg", "f_wout")

    def __init__(self, mu_noob: float, sig_noob: float) -> None:
        self.mu_noob = mu_noob
        self.sig_noob = sig_noob
        self.n = 0
        self.nf_mu: FloatArray = np.zeros(0)
        self.nf_w: FloatArray = np.zeros(0)
        for name, _ in self.EXTRA_FIELDS:
            setattr(self, name, np.zeros(0))
        self.fb_base: IntArray = np.zeros(0, dtype=np.int64)
        self.fb_cap: IntArray = np.zeros(0, dtype=np.int64)
        self.fb_start: IntArray = np.zeros(0, dtype=np.int64)
        self.fb_len: IntArray = np.zeros(0, dtype=np.int64)
        self.f_mu: FloatArray = np.zeros(_MIN_POOL)
        self.f_warg: FloatArray = np.zeros(_MIN_POOL)
        self.f_wout: FloatArray = np.zeros(_MIN_POOL)
        self.used = 0
        # maybe_compact counts the live factors only once ``used`` passes this
        self._compact_at = -1

    @classmethod
    def player_fields(cls) -> tuple[str, ...]:
        """Names of the per-player arrays, in checkpoint order.

        Returns
        -------
        tuple of str
            ``nf_mu, nf_w``, the subclass's extra fields, then ``fb_*``.
        """
        extra = tuple(name for name, _ in cls.EXTRA_FIELDS)
        return cls._NORMAL_FIELDS + extra + cls._BLOCK_FIELDS

    # ------------------------------------------------------------------ players
    def ensure_players(self, n: int) -> None:
        """Make room for players ``0..n-1``; new rows hold the newcomer prior, no factors.

        Parameters
        ----------
        n:
            Number of players needed.
        """
        if n <= self.n:
            return
        for name in self.player_fields():
            setattr(self, name, grow(getattr(self, name), n))
        s = slice(self.n, n)
        self.nf_mu[s] = self.mu_noob
        self.nf_w[s] = 1.0 / self.sig_noob**2
        for name, value in self.EXTRA_FIELDS:
            getattr(self, name)[s] = value
        for name in self._BLOCK_FIELDS:
            getattr(self, name)[s] = 0
        self.n = n

    def block(self, i: int) -> tuple[int, int]:
        """Pool range ``[begin, end)`` of player ``i``'s live logistic factors.

        Parameters
        ----------
        i:
            Player index.

        Returns
        -------
        tuple of int
            ``(begin, end)``; the factors are ``f_*[begin:end]``, oldest first.
        """
        b = int(self.fb_base[i] + self.fb_start[i])
        return b, b + int(self.fb_len[i])

    def live_factors(self) -> int:
        """Number of live logistic factors over all players.

        Returns
        -------
        int
            ``sum(fb_len[:n])``.
        """
        return int(self.fb_len[: self.n].sum())

    # ------------------------------------------------------------------ kernel views
    def normal_view(self) -> PK.Normal:
        """The normal factors ``(nf_mu, nf_w)`` as the kernels take them (no copy)."""
        import podium.systems.base.factor_pool_kernels as PK

        return PK.Normal(self.nf_mu, self.nf_w)

    def blocks_view(self) -> PK.Blocks:
        """The block bookkeeping ``fb_*`` as the kernels take it (no copy)."""
        import podium.systems.base.factor_pool_kernels as PK

        return PK.Blocks(self.fb_base, self.fb_cap, self.fb_start, self.fb_len)

    def pool_view(self) -> PK.Factors:
        """The pool ``(f_mu, f_warg, f_wout)`` as the kernels take it (no copy)."""
        import podium.systems.base.factor_pool_kernels as PK

        return PK.Factors(self.f_mu, self.f_warg, self.f_wout)

    # ------------------------------------------------------------------ the pool
    def reserve(self, players: IntArray) -> None:
        """Make room for one more logistic factor for each of ``players``.

        Parameters
        ----------
        players:
            Player indices (distinct).

        See Also
        --------
        podium.systems.base.factor_pool_kernels.reserve
        """
        import podium.systems.base.factor_pool_kernels as PK

        pool, self.used = PK.reserve(players, self.blocks_view(), self.pool_view(), self.used)
        self.f_mu, self.f_warg, self.f_wout = pool

    def compact(self, roomy: bool = False) -> None:
        """Copy every player's live factors into a fresh pool without abandoned blocks:
        the canonical layout (full blocks, no spare slot) of a checkpoint, or with
        ``roomy`` one that leaves the blocks room to grow
        (:func:`~podium.systems.base.factor_pool_kernels.compact_pool`)."""
        import podium.systems.base.factor_pool_kernels as PK

        pool, self.used = PK.compact_pool(self.n, self.blocks_view(), self.pool_view(),
                                          roomy)
        self.f_mu, self.f_warg, self.f_wout = pool

    def maybe_compact(self) -> None:
        """Rebuild the pool when abandoned blocks waste more than half of it
        (``used > 2 live + 4 n``, once the pool holds more than 4096 slots).

        Counting the live factors reads every player's row, which an ``add`` loop of
        small rounds among many players would pay after every round.  So the count
        is taken only once ``used`` exceeds ``2 live + 4 n`` of the last count: a
        round never lowers the live factors (it adds one per participant, or folds
        the oldest and adds one at the history limit; the memoryless variants keep
        at most one) nor ``n``, so the condition cannot hold before.  Where a system
        does drop factors, compaction merely comes later; it never changes a value.
        """
        if self.used <= self._compact_at:
            return
        live = self.live_factors()
        if self.used > 4096 and self.used > 2 * live + 4 * self.n:
            self.compact(roomy=True)
        self._compact_at = max(4096, 2 * live + 4 * self.n)

    def truncate_players(self, n: int) -> None:
        """Forget players ``n..`` (see :meth:`SystemState.truncate_players`)."""
        super().truncate_players(n)
        self._compact_at = -1

    # ------------------------------------------------------------------ checkpoints
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Everything needed to resume, as named arrays (compacts the pool first).

        Returns
        -------
        dict of str to ndarray
            The per-player arrays (first ``n`` rows), the used part of the pool
            (``f_mu``, ``f_warg``, ``f_wout``) and ``prior = [mu_noob, sig_noob]``.
        """
        self.compact()
        out = {name: getattr(self, name)[: self.n].copy() for name in self.player_fields()}
        for name in self._POOL_FIELDS:
            out[name] = getattr(self, name)[: self.used].copy()
        out["prior"] = np.array([self.mu_noob, self.sig_noob])
        return out

    @classmethod
    def from_arrays(cls, d: dict[str, np.ndarray]) -> Self:
        """Inverse of :meth:`to_arrays`.

        Parameters
        ----------
        d:
            Arrays as written by :meth:`to_arrays`.

        Returns
        -------
        FactorPoolState
            A state of class ``cls``.
        """
        prior = d["prior"]
        st = cls(float(prior[0]), float(prior[1]))
        for name in cls.player_fields():
            setattr(st, name, np.array(d[name]))
        st.n = int(st.nf_mu.size)
        st.used = int(np.asarray(d["f_mu"]).size)
        size = max(st.used, _MIN_POOL)
        for name in cls._POOL_FIELDS:
            arr = np.zeros(size)
            arr[: st.used] = d[name]
            setattr(st, name, arr)
        return st

    def copy(self) -> Self:
        """A deep copy (used to roll back a round that failed).

        Returns
        -------
        FactorPoolState
            An independent state of the same class.
        """
        st = type(self)(self.mu_noob, self.sig_noob)
        for name in self.player_fields() + self._POOL_FIELDS:
            setattr(st, name, getattr(self, name).copy())
        st.n = self.n
        st.used = self.used
        return st
