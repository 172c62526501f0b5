"""Verdicts (docs/matcher.md#verdict): one run scored against one case (``scorer``), its
expected calls credited to recorded calls and what was not explained (``calls``), into the
report.

The top layer of the matcher (the layers of ``scoring/matcher/__init__.py``): it builds on
the suites, the expectations, the arguments and the modules at the matcher's top.
"""
