"""Loading suites (docs/formats.md#suite-files): a suite document validated into its cases,
each with its expected calls and expectations compiled (``suite``), and the authoring
warnings against its tool catalog (``warnings``).

A case is built of the expectations and the arguments' patterns, so this sits above them;
the verdicts build on it (the layers of ``scoring/matcher/__init__.py``).
"""
