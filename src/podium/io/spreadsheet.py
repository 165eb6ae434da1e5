"""Spreadsheet-safe CSV cells: text that a spreadsheet would run as a formula, neutralised.

A spreadsheet opening a CSV file reads a cell that begins with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return as a formula (OWASP, "CSV Injection"): a handle such as
``=HYPERLINK("http://evil.example/","click")`` or ``=cmd|' /C calc'!A0`` becomes a live
link or a command.  OWASP's advice, followed here: put a single quote in front of such
a cell, which spreadsheets show as text.

The rule (:func:`neutralize`): a **text** cell that begins with one of
:data:`FORMULA_TRIGGERS` -- or with a single quote, so that the rule can be undone --
gets one ``'`` in front.  Numbers are never touched (``-3.5`` stays a number), and text
that begins otherwise is written as it is.  :func:`restore` undoes it: drop one leading
``'``.

Codeforces handles that begin with ``-`` (``-101-``, ``-Morass-``) stay readable: the
cell is ``'-101-``, which a spreadsheet shows as the text ``-101-`` after its quote
instead of a ``#NAME?`` error (or a number: ``-101`` would be computed), and the handle
is recovered exactly by :func:`restore`.

Where it applies (docs/service.md, "CSV and spreadsheets"):

* the service's CSV exports (``GET /api/export/...?format=csv``) and ``podium export``
  neutralise by default (a file handed to a person); ``raw=true`` / ``--raw`` writes
  the cells as stored, for programs;
* ``podium rate`` writes research output, read back by programs (pandas, Podium's own
  tests and bit-identity checks), so its cells are the values as they are by default;
  ``--csv-safe`` neutralises them for a file meant for a spreadsheet.

Parquet files hold typed values, not formulas: they are never changed.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["FORMULA_TRIGGERS", "neutralize", "neutralize_array", "neutralize_table",
           "restore"]

#: The first characters that make a spreadsheet read a cell as a formula (OWASP).
FORMULA_TRIGGERS = "=+-@\t\r"
# ... and the quote itself, so that the rule can be undone (restore).
_ESCAPED = FORMULA_TRIGGERS + "'"
_ESCAPED_RE = "^[=+\\-@\t\r']"


def neutralize(text: str) -> str:
    """``text`` as a spreadsheet-safe cell (see the module notes).

    >>> neutralize("=1+1"), neutralize("-101-"), neutralize("tourist"), neutralize("'a")
    ("'=1+1", "'-101-", 'tourist', "''a")
    """
    return "'" + text if text and text[0] in _ESCAPED else text


def restore(text: str) -> str:
    """The text of a cell written by :func:`neutralize`.

    >>> restore("'-101-"), restore("tourist"), restore("''a")
    ('-101-', 'tourist', "'a")
    """
    return text[1:] if text.startswith("'") else text


def neutralize_array(arr: pa.Array | pa.ChunkedArray) -> Any:
    """:func:`neutralize` of every value of an Arrow string array (nulls stay null)."""
    prefixed = pc.binary_join_element_wise(pa.scalar("'", arr.type), arr,
                                           pa.scalar("", arr.type))
    return pc.if_else(pc.match_substring_regex(arr, _ESCAPED_RE), prefixed, arr)


def neutralize_table(table: pa.Table) -> pa.Table:
    """``table`` with every string column under :func:`neutralize_array`."""
    cols = [neutralize_array(c) if pa.types.is_string(c.type) or pa.types.is_large_string(c.type)
            else c for c in table.columns]
    return pa.table(cols, names=table.column_names)
