"""``python -m podium``: the same as the ``podium`` command."""

from podium.cli import main

raise SystemExit(main())
