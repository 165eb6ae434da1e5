"""Reading and writing contest histories (Elo-MMR JSON files, directories, archives, CSV)."""

from podium.io.contests import (
    LoadedHistory,
    check_history,
    contest_from_json_dict,
    iter_contests,
    load_contests,
    read_contest_json,
    read_contests_csv,
    write_contest_dir,
    write_contest_json,
    write_contests_csv,
)
from podium.io.synthetic import synthetic_contests

__all__ = [
    "synthetic_contests",
    "LoadedHistory",
    "check_history",
    "contest_from_json_dict",
    "iter_contests",
    "load_contests",
    "read_contest_json",
    "read_contests_csv",
    "write_contest_dir",
    "write_contest_json",
    "write_contests_csv",
]
