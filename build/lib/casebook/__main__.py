"""``python -m casebook``: the ``casebook`` command."""

from casebook.cli import main

raise SystemExit(main())
