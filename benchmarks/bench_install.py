"""What the kernel prebuild costs a user's install, and what it saves their first run.

    python benchmarks/bench_install.py [--repeat 1] [--write-docs]

Issue 30 asks two things of the README's first command (``python -m pip install -e .
&& podium example example-data && podium rate example-data --system mmr --out out``):
that ``pip install -e .`` take at most 1.5x what it took without compiling kernels at
install, and that the first ``podium rate`` take at most 1.5x its warm run.  Both are
measured here in one run: the current commit is cloned three times into fresh
directories, each gets a fresh virtual environment, and ``pip install -e .`` runs once
with ``PODIUM_PREBUILD=none`` (the install as it was before the prebuild: kernels
compile on first use), once with the default prebuild (``mmr``, the README's job,
compiled while the package is built) in one process (``PODIUM_PREBUILD_JOBS=1``), and
once with the default prebuild as a user gets it (one process per CPU).  Then, in
each, ``podium example example-data`` and the README's ``podium rate`` twice: the
first run and a warm one.

The pip cache: ``--pip-cache warm`` (the default) uses whatever this machine holds (a
warm cache makes the install's own work short, so the prebuild's share is the largest
it can be; nothing is downloaded that the cache lacks); ``--pip-cache cold`` gives each
install an empty cache of its own (``PIP_CACHE_DIR``), as on a machine that never
installed these packages: every wheel is downloaded from the package index, and the
prebuild, which starts when pip asks for the package's metadata, compiles while pip
resolves and downloads the dependencies.

Printed as a Markdown table, ratios to the install without a prebuild first;
``--write-docs`` writes it into docs/benchmarks.md (block ``install``, or
``install-cold`` for a cold cache).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _report import ROOT, load_average, timed_process, write_section

#: (name, the build's variables, label): without a prebuild, the default prebuild in
#: one process, and the default prebuild in its default processes (one per CPU).
MODES: tuple[tuple[str, dict[str, str], str], ...] = (
    ("none", {"PODIUM_PREBUILD": "none"}, "without a prebuild (`PODIUM_PREBUILD=none`)"),
    ("one", {"PODIUM_PREBUILD_JOBS": "1"},
     "with the default prebuild (`mmr`), in one process (`PODIUM_PREBUILD_JOBS=1`)"),
    ("default", {}, "with the default prebuild (`mmr`), one process per CPU (the default)"))


def _timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``cmd`` (:func:`timed_process`), and its stderr."""
    wall, cpu, proc = timed_process(cmd, cwd, env)
    if proc.returncode != 0:
        raise SystemExit(f"bench_install: {' '.join(cmd)} failed in {cwd}:\n"
                         f"{proc.stderr[-2000:]}")
    return wall, cpu, proc.stderr


def _one(mode: str, variables: dict[str, str], work: Path,
         cold: bool) -> dict[str, float | bool]:
    tree = work / f"podium-{mode}"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(tree)], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(tree / ".venv")], check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR", "PODIUM_PREBUILT_DIR")
           and not k.startswith("PODIUM_PREBUILD")}
    env.update(variables)
    if cold:  # an empty cache of this install's own: every wheel is downloaded
        env["PIP_CACHE_DIR"] = str(work / f"pip-cache-{mode}")
    py = str(tree / ".venv" / "bin" / "python")
    podium = str(tree / ".venv" / "bin" / "podium")
    # the install's CPU is not measured: the prebuild runs in a process of its own
    # session, which pip does not wait for as a child
    install, _, _ = _timed([py, "-m", "pip", "install", "-q", "-e", "."], tree, env)
    _timed([podium, "example", "example-data"], tree, env)
    rate = [podium, "rate", "example-data", "--system", "mmr", "--out"]
    first, first_cpu, first_stderr = _timed([*rate, "out1"], tree, env)
    warm, warm_cpu, _ = _timed([*rate, "out2"], tree, env)
    manifest = tree / "src" / "podium" / "_prebuilt" / "manifest.json"
    prebuild = json.loads(manifest.read_text())["total_seconds"] if manifest.exists() else 0.0
    return {"install": install, "first": first, "first_cpu": first_cpu, "warm": warm,
            "warm_cpu": warm_cpu, "first_compiled": "compiling kernels" in first_stderr,
            "prebuild": prebuild}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=1, help="pairs of installs (medians)")
    ap.add_argument("--pip-cache", choices=("warm", "cold"), default="warm",
                    help="warm: this machine's pip cache; cold: an empty one per install")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    load = load_average()
    runs: dict[str, list[dict[str, float | bool]]] = {m: [] for m, _, _ in MODES}
    with tempfile.TemporaryDirectory(prefix="podium-install-") as tmp:
        for k in range(args.repeat):
            for mode, variables, _ in MODES:
                work = Path(tmp) / str(k)
                work.mkdir(exist_ok=True)
                runs[mode].append(_one(mode, variables, work, args.pip_cache == "cold"))
                for path in (f"podium-{mode}", f"pip-cache-{mode}"):
                    shutil.rmtree(work / path, ignore_errors=True)

    def med(mode: str, key: str) -> float:
        values = sorted(float(r[key]) for r in runs[mode])
        return values[len(values) // 2]

    base = med("none", "install")
    base_total = base + med("none", "first")
    rows = []
    for mode, _, label in MODES:
        inst, first, warm = med(mode, "install"), med(mode, "first"), med(mode, "warm")
        compiled = sum(bool(r["first_compiled"]) for r in runs[mode])
        prebuild = f"{med(mode, 'prebuild'):.1f}" if mode != "none" else "-"
        rows.append(f"| {label} | {inst / base:.2f}x | {first / warm:.2f}x "
                    f"({med(mode, 'first_cpu') / med(mode, 'warm_cpu'):.2f}x) | "
                    f"{(inst + first) / base_total:.2f}x | {inst:.1f} | {prebuild} | "
                    f"{first:.2f} | {warm:.2f} | {compiled} of {len(runs[mode])} |")
    body = (
        f"{args.repeat} install(s) of each kind, medians; fresh clone and virtual "
        "environment each; "
        + ("an empty pip cache each (every wheel downloaded from PyPI)"
           if args.pip_cache == "cold" else "the pip cache as this machine holds it")
        + f"; {os.cpu_count()} "
        "CPUs.  *Prebuild s*: the prebuild's own wall time (its manifest).\n\n"
        "| install | install ÷ without prebuild | first `podium rate` ÷ warm (CPU) | "
        "install + first rate ÷ without prebuild | install s | prebuild s | first rate s "
        "| warm rate s | first rates that compiled |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows))
    print(body)
    if args.write_docs:
        block = "install-cold" if args.pip_cache == "cold" else "install"
        print(f"updated {write_section('docs/benchmarks.md', block, body, load_at_start=load)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
