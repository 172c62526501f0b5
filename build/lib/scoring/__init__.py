"""Scoring: recorded runs of a suite, scored by the matcher, and what people do with the
results. docs/architecture.md draws the layers; import-linter keeps them (``make lint``).

Its sub-packages, from the bottom up (each may import only those below it, and ``cases``):

- ``matcher``, ``importers``: the pure libraries (no Django, nothing else of the project);
- ``runfiles``: reading and scoring run files with no database (``manage.py score``);
- ``models``: the app's tables;
- ``ingest`` and ``results``, side by side: uploads into scored submissions, and the read
  side of what was scored;
- ``live``, ``review`` and ``benchmarks``, side by side: live traces, the review workflow,
  suites from benchmarks' own files;
- ``tasks``: the Celery tasks, over the services they run;
- ``forms``, ``templatetags``, then ``views`` and ``api``: the pages and the REST API;
- ``urls``, ``admin``, ``management``: wiring and commands.
"""
