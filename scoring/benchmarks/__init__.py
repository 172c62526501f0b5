"""Suites made from benchmarks' own files (docs/benchmarks.md): a BFCL category's questions
and possible answers as a suite (``bfcl_suites``).

May import: ``scoring.runfiles``, ``scoring.matcher``, ``cases.tool_catalog``.
"""
