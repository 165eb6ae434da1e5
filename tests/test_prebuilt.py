"""Kernels compiled when the package is built (podium.prebuild, core/kernel_cache.py):
a fresh process loads them without compiling; a prebuilt directory that does not match
is ignored, and the kernels compile on demand, announced; commands that need no kernel
load no Numba."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
#: A system with one small kernel module: its prebuild compiles in seconds.
SYSTEM = "tcsys"
#: A system whose small histories compile signatures that its example history does not,
#: in seconds.
SPLIT_SYSTEM = "openskill-pl"

PROBE = """\
import json, sys
from podium.cli import main
from podium.core.kernel_cache import KernelCache
rc = main(sys.argv[1:])
hits = misses = 0
for name, module in list(sys.modules.items()):
    if name.startswith("podium"):
        for value in vars(module).values():
            if isinstance(getattr(value, "_cache", None), KernelCache):
                hits += sum(value.stats.cache_hits.values())
                misses += sum(value.stats.cache_misses.values())
print(json.dumps({"rc": rc, "hits": hits, "misses": misses}))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _history(path: Path) -> Path:
    path.mkdir()
    for k in range(2):
        standings = [[f"p{(i + k) % 7}", i, i] for i in range(7)]
        (path / f"{k}.json").write_text(json.dumps(
            {"name": f"r{k}", "time_seconds": k, "standings": standings}))
    return path


def _rate(tmp: Path, out: str, **env: str) -> tuple[dict[str, int], str]:
    """``podium rate`` of the small history in a fresh interpreter: its exit status,
    the kernels' cache hits and misses (a miss is a compilation), and its stderr."""
    return _podium(tmp, ["rate", "--out", str(tmp / out)], **env)


def _podium(tmp: Path, command: list[str], **env: str) -> tuple[dict[str, int], str]:
    """``podium COMMAND HISTORY --system SYSTEM`` of the small history in a fresh
    interpreter, as :func:`_rate`."""
    data = tmp / "h" if (tmp / "h").exists() else _history(tmp / "h")
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, command[0], str(data), "--system", SYSTEM,
         *command[1:], "--no-progress"],
        env=_env(**env), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


@pytest.fixture(scope="module")
def prebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kernels of :data:`SYSTEM`, compiled by ``python -m podium.prebuild --eval``
    (rating and scoring its jobs)."""
    directory = tmp_path_factory.mktemp("prebuilt")
    proc = subprocess.run(
        [sys.executable, "-m", "podium.prebuild", "--systems", SYSTEM, "--dir", str(directory),
         "--eval"],
        env=_env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["systems"] == [SYSTEM]
    assert manifest["magic"][1:] == ["generic", ""]
    assert list(directory.rglob("*.nbi")), "the prebuild wrote no kernel"
    return directory


def test_a_fresh_process_loads_the_prebuilt_kernels(prebuilt: Path, tmp_path: Path) -> None:
    """With an empty cache of its own, a first run loads every kernel it calls from the
    prebuilt directory: no compilation (no cache miss), no notice, the same bytes as
    kernels compiled on demand for this CPU."""
    first, err = _rate(tmp_path, "o1", PODIUM_PREBUILT_DIR=str(prebuilt),
                       NUMBA_CACHE_DIR=str(tmp_path / "cache1"))
    assert first["rc"] == 0 and first["hits"] > 0 and first["misses"] == 0, first
    assert "compiling kernels" not in err
    assert not list((tmp_path / "cache1").rglob("*.nbi")), "a kernel was compiled"
    # the control: without the prebuilt directory the same run compiles, and says so
    none = tmp_path / "none"
    none.mkdir()
    cold, err = _rate(tmp_path, "o2", PODIUM_PREBUILT_DIR=str(none),
                      NUMBA_CACHE_DIR=str(tmp_path / "cache2"))
    assert cold["misses"] > 0 and f"compiling kernels for {SYSTEM}, once:" in err
    for name in ("ratings.csv", "histories.csv", "contests.csv"):
        assert (tmp_path / "o1" / name).read_bytes() == (tmp_path / "o2" / name).read_bytes()


def test_a_first_eval_loads_the_prebuilt_kernels(prebuilt: Path, tmp_path: Path) -> None:
    """With ``--eval`` the prebuild scores its histories as ``podium eval`` does: a
    first ``podium eval`` loads the metrics' and the calibration's kernels too (no
    compilation, no notice); without the prebuilt directory the same run compiles
    them."""
    first, err = _podium(tmp_path, ["eval"], PODIUM_PREBUILT_DIR=str(prebuilt),
                         NUMBA_CACHE_DIR=str(tmp_path / "cache1"))
    assert first["rc"] == 0 and first["hits"] > 0 and first["misses"] == 0, first
    assert "compiling kernels" not in err
    assert not list((tmp_path / "cache1").rglob("*.nbi")), "a kernel was compiled"
    assert list(prebuilt.rglob("_metrics_kernels.*.nbi")), "no evaluation kernel prebuilt"
    none = tmp_path / "none"
    none.mkdir()
    cold, _ = _podium(tmp_path, ["eval"], PODIUM_PREBUILT_DIR=str(none),
                      NUMBA_CACHE_DIR=str(tmp_path / "cache2"))
    assert cold["misses"] > 0
    assert list((tmp_path / "cache2").rglob("_metrics_kernels.*.nbi"))


@pytest.mark.parametrize("change", ["numba", "triple", "cpu", "stamp"])
def test_a_prebuilt_directory_that_does_not_match_is_ignored(
        prebuilt: Path, tmp_path: Path, change: str) -> None:
    """Another Numba, another architecture, another CPU target or an edited source:
    the prebuilt kernels are not loaded; they compile on demand, announced."""
    copy = tmp_path / "prebuilt"
    shutil.copytree(prebuilt, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    if change == "numba":
        manifest["numba"] = "0.0.0"
    elif change == "triple":
        manifest["magic"][0] = "riscv64-unknown-linux-gnu"
    elif change == "cpu":
        manifest["magic"][1:] = ["skylake", "+avx2"]
    else:  # every stamp differs from the tree's: as after an edit of the source
        for index in copy.rglob("*.nbi"):
            with open(index, "rb") as f:
                version = pickle.load(f)
                _, overloads = pickle.loads(f.read())
            with open(index, "wb") as f:
                pickle.dump(version, f)
                f.write(pickle.dumps(("0" * 64, overloads)))
        manifest["stamps"] = {k: "0" * 64 for k in manifest["stamps"]}
    (copy / "manifest.json").write_text(json.dumps(manifest))
    result, err = _rate(tmp_path, "o", PODIUM_PREBUILT_DIR=str(copy),
                        NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert result["rc"] == 0 and result["misses"] > 0, result
    assert f"compiling kernels for {SYSTEM}, once:" in err


@pytest.mark.parametrize("command", [
    ["systems"], ["systems", "-v"], ["--help"], ["rate", "--help"],
    ["token", "list", "--db", "DB"], ["audit", "--db", "DB"],
    ["explain", "--db", "DB", "--contest", "1", "--player", "nobody"],
])
def test_commands_that_use_no_kernel_load_no_numba(tmp_path: Path, command: list[str]) -> None:
    """``podium systems`` (with every parameter of every system), ``--help``, the
    token, audit and explain commands on a store: Numba stays out of ``sys.modules``."""
    db = f"sqlite:///{tmp_path / 'store.db'}"
    argv = [db if a == "DB" else a for a in command]
    code = (
        "import contextlib, io, sys\n"
        "from podium.cli import main\n"
        "from podium.store import Store\n"
        f"Store.create({db!r}, 'mmr').close()\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        f"        rc = main({argv!r})\n"
        "    except SystemExit as exc:\n"
        "        rc = exc.code\n"
        "print(rc, len(out.getvalue()) > 0, 'numba' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rc, printed, numba = proc.stdout.split()[-3:]
    assert numba == "False", f"{command} loaded Numba"
    if command[0] != "explain":  # nobody has no rating change to explain: an error
        assert rc in ("0", "None"), proc.stdout + proc.stderr
    if command[0] in ("systems", "--help", "rate"):
        assert printed == "True", proc.stdout + proc.stderr


def test_the_checker_sees_numba(tmp_path: Path) -> None:
    """The control of the test above: a command that rates does load Numba."""
    code = ("import sys\nfrom podium.systems import get_system\n"
            "get_system('mmr').make_state\nimport podium.systems.elo_mmr.kernels\n"
            "print('numba' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert proc.stdout.split()[-1] == "True", proc.stderr


def test_kernel_modules_import_numerics_from_their_modules() -> None:
    """The numerics package imports its modules lazily, so its ``__init__`` names none of
    them: a kernel module that imported a name through the package would leave the
    module out of its cache's source stamp (core/kernel_cache.py follows imports)."""
    offenders = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                 if "@nb.njit(cache=True" in (text := p.read_text())
                 and ("from podium.core.numerics import" in text
                      or "import podium.core.numerics\n" in text)]
    assert not offenders, offenders


def _signatures(directory: Path) -> dict[str, set[str]]:
    """Every kernel index of a prebuilt directory: the signatures it holds."""
    found = {}
    for index in directory.rglob("*.nbi"):
        with open(index, "rb") as f:
            pickle.load(f)
            _, overloads = pickle.loads(f.read())
        found[str(index.relative_to(directory))] = {str(key[0]) for key in overloads}
    return found


def test_a_parallel_prebuild_leaves_no_kernel_out(tmp_path: Path) -> None:
    """``--jobs 2`` compiles the example history in this process and the small histories
    (kernels of their own among them) in another, into one directory: the same
    signatures of the same kernels as ``--jobs 1``, none compiled again by the check
    pass, and a first run of a game's lobbies and of a small history loads every
    kernel: no compilation."""
    dirs = {jobs: tmp_path / f"prebuilt{jobs}" for jobs in (1, 2)}
    for jobs, directory in dirs.items():
        proc = subprocess.run(
            [sys.executable, "-m", "podium.prebuild", "--systems", SPLIT_SYSTEM, "--dir",
             str(directory), "--jobs", str(jobs)], env=_env(), capture_output=True,
            text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr
        manifest = json.loads((directory / "manifest.json").read_text())
        assert manifest["systems"] == [SPLIT_SYSTEM] and manifest["jobs"] == jobs, manifest
        assert manifest["compiled_by_check"] == 0, proc.stderr
    assert sorted(p.name for p in dirs[2].iterdir()) == ["manifest.json", "podium"]
    assert _signatures(dirs[2]) == _signatures(dirs[1])
    lobbies = tmp_path / "lobbies"
    subprocess.run([sys.executable, "-m", "podium", "example", str(lobbies), "--players", "64",
                    "--rounds", "12", "--participation", "0.125"], env=_env(), check=True,
                   capture_output=True, timeout=300)
    for k, data in enumerate([lobbies, _history(tmp_path / "h")]):
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, "rate", str(data), "--system", SPLIT_SYSTEM,
             "--out", str(tmp_path / f"o{k}"), "--no-progress"],
            env=_env(PODIUM_PREBUILT_DIR=str(dirs[2]),
                     NUMBA_CACHE_DIR=str(tmp_path / f"cache{k}")),
            capture_output=True, text=True, timeout=900)
        first = json.loads(proc.stdout.strip().splitlines()[-1])
        assert first["rc"] == 0 and first["hits"] > 0 and first["misses"] == 0, \
            (data.name, first, proc.stderr)


RACER = """\
import os, sys, time
from numba.core import caching
from podium.core import kernel_cache
kernel_cache.watch_package("racepkg", sys.argv[1])
kernel_cache.start_prebuild(sys.argv[2])
load = caching.IndexDataCacheFile._load_index
def slow(self):  # widen the window between reading a kernel's index and writing it
    found = load(self)
    time.sleep(0.4)
    return found
caching.IndexDataCacheFile._load_index = slow
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import numpy as np
from racepkg.k import f
open(sys.argv[3] + "." + sys.argv[4], "w").close()
while not all(os.path.exists(sys.argv[3] + "." + w) for w in ("a", "b")):
    time.sleep(0.005)
values = {"a": [np.int32(1), np.int64(1), np.float64(1)],
          "b": [np.int16(1), np.int64(1), np.float64(1)]}[sys.argv[4]]
for x in values:
    f(x)
print(sum(f.stats.cache_misses.values()), sum(f.stats.cache_hits.values()))
"""


def test_processes_of_a_prebuild_store_each_kernel_once_and_lose_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes of one prebuild call one kernel at the same moment, with a signature
    of their own each and then two shared ones, with the window between reading a kernel's
    index and writing it widened: each signature is compiled once (the other process
    waits for its claim and loads it), the index keeps all four, and each entry holds
    its own signature's machine code (without the index lock, both would write the
    first data file and one entry would be lost)."""
    package = tmp_path / "racepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "k.py").write_text(
        "import numba as nb\nimport podium.core.kernel_cache  # noqa: F401\n\n\n"
        "@nb.njit(cache=True)\ndef f(x):\n    return x + 1\n")
    directory = tmp_path / "prebuilt"
    racers = [subprocess.Popen(
        [sys.executable, "-c", RACER, str(package), str(directory), str(tmp_path / "ready"), w],
        env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in ("a", "b")]
    counts = []
    for racer in racers:
        out, err = racer.communicate(timeout=600)
        assert racer.returncode == 0, err
        counts.append([int(n) for n in out.split()])
    misses, hits = sum(c[0] for c in counts), sum(c[1] for c in counts)
    assert (misses, hits) == (4, 2), counts
    [index] = list(directory.rglob("k.f-*.nbi"))
    with open(index, "rb") as fh:
        pickle.load(fh)
        _, overloads = pickle.loads(fh.read())
    assert sorted(str(key[0]) for key in overloads) == [
        "(float64,)", "(int16,)", "(int32,)", "(int64,)"]
    assert len(set(overloads.values())) == 4
    monkeypatch.syspath_prepend(str(tmp_path))  # the machine code names its module
    for key, name in overloads.items():
        payload = pickle.loads((index.parent / name).read_bytes())
        assert tuple(payload[3].args) == tuple(key[0]), (key[0], payload[3])


def test_the_prebuild_splits_one_system_into_its_two_shares(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One system on two processes: its example history apart from its small histories;
    at least as many systems as processes: whole systems; by default one process per
    CPU this process may use, at most one per share, and one on a one-CPU machine."""
    from podium import prebuild

    assert prebuild.split(["mmr"], 2) == [[("mmr", "example")], [("mmr", "small")]]
    assert prebuild.split(["mmr"], 8) == [[("mmr", "example")], [("mmr", "small")]]
    assert prebuild.split(["a", "b", "c"], 2) == [
        [("a", "example"), ("a", "small"), ("c", "example"), ("c", "small")],
        [("b", "example"), ("b", "small")]]
    assert prebuild.split(["a", "b"], 3) == [
        [("a", "example"), ("b", "small")], [("b", "example")], [("a", "small")]]
    assert prebuild.split(["mmr"], 1) == [[("mmr", "example"), ("mmr", "small")]]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert prebuild.default_jobs(2) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert prebuild.default_jobs(2) == 2
    assert prebuild.default_jobs(30) == prebuild.MAX_JOBS
