"""Reading and writing contest histories (Elo-MMR JSON files, directories, archives, CSV).

The layers, each in its own module:

* :mod:`podium.io.json_contests`: the Elo-MMR JSON contest format;
* :mod:`podium.io.sources`: directories of ``N.json`` files and tar archives of them;
* :mod:`podium.io.csv_long`: the CSV long table;
* :mod:`podium.io.history`: dispatch on the path, loading a whole history, checks;
* :mod:`podium.io.writers`: writing contests back (JSON, directory, CSV);
* :mod:`podium.io.results`: writing a rater's results (ratings, histories, contests)
  as CSV or Parquet.
"""

from podium.io.csv_long import read_contests_csv
from podium.io.history import LoadedHistory, check_history, iter_contests, load_contests
from podium.io.json_contests import contest_from_json_dict, read_contest_json
from podium.io.synthetic import synthetic_contests
from podium.io.writers import write_contest_dir, write_contest_json, write_contests_csv

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
