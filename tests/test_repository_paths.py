"""No absolute path of one machine anywhere in the repository.

Tests, benchmarks and docs find the shared data sets relative to the checkout
(``../shared/datasets``) or through ``$PODIUM_DATA_DIR`` (tests/_require.py); a
hard-coded absolute path works on the machine it was written on only, and elsewhere
makes the tests that use it skip.  Every tracked file (``git ls-files``; without git,
every file under the checkout but virtual environments and caches) is searched for
the home, work and mount folders of a machine (``/work``, ``/home/<user>``, ``/root``,
``/Users/<user>``, ``/mnt``, each followed by a slash).  Scratch paths under ``/tmp``
in example commands are not machine paths and are allowed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from _require import REPO_ROOT

#: A machine's absolute folder: not preceded by a word character, a dot or a tilde (so
#: ``../shared``, ``~/x`` and URLs such as ``https://example.org/work/`` do not count).
MACHINE_PATH = re.compile(
    r"(?<![\w.~/-])/(?:" + "|".join(["work", r"home/[\w.-]+", "root", r"Users/[\w.-]+", "mnt"])
    + r")/"
)
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache",
             ".pytest_cache", ".hypothesis", "build", "dist", "node_modules"}


def tracked_files() -> list[Path]:
    if shutil.which("git") and (REPO_ROOT / ".git").exists():
        out = subprocess.run(["git", "-C", str(REPO_ROOT), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        return [REPO_ROOT / name for name in out.decode().split("\0") if name]
    return [p for p in REPO_ROOT.rglob("*")
            if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(REPO_ROOT).parts)
            and not p.name.endswith(".egg-info")]


def test_the_pattern_finds_machine_paths() -> None:
    slash = "/"
    for bad in ("work", "home/alice", "root", "Users/bob", "mnt"):
        text = f'DATA = Path("{slash}{bad}{slash}shared/datasets/x.tar.gz")'
        assert MACHINE_PATH.search(text), text
    for fine in ("../shared/datasets/x.tar.gz", "https://example.org/work/x",
                 "sqlite:////tmp/cf.db", "~/work/x", "$PODIUM_DATA_DIR/codeforces/",
                 "src/podium/home/x"):
        assert not MACHINE_PATH.search(fine), fine


def test_no_machine_paths_in_tracked_files() -> None:
    files = tracked_files()
    assert len(files) > 50  # the whole checkout, not an empty listing
    hits = []
    for path in files:
        if not path.is_file():  # deleted in the working tree but still tracked
            continue
        data = path.read_bytes()
        if b"\0" in data[:4096]:
            continue  # binary
        for k, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{path.relative_to(REPO_ROOT)}:{k}: {line.strip()[:120]}")
    assert not hits, (
        "absolute paths of one machine (use ../shared/datasets relative to the checkout "
        "or $PODIUM_DATA_DIR; tests: tests/_require.py):\n" + "\n".join(hits)
    )
