"""Arguments and matchers: what a call's arguments may be (docs/matcher.md#expected-calls).

``patterns`` (a value as a pattern: equal, within a tolerance, matching a regex...),
``matchers`` (expected values, argument matchers included, compiled into patterns),
``arguments`` (an expected call's arguments as a whole), shown beside a recorded call's
(``argdiff``) and in words (``words``); the suite's tool catalog (``tools``) and a tool's
JSON Schema checked against a call's arguments (``schemas``).

It builds on the modules at the matcher's top alone; the expectations, the suites and the
verdicts build on it (the layers of ``scoring/matcher/__init__.py``).
"""
