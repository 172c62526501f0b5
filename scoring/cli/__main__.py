"""``python -m scoring.cli``: the ``casebook`` command, from a checkout."""

from scoring.cli.main import main

raise SystemExit(main())
