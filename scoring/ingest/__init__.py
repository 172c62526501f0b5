"""Uploads into scored submissions (docs/pipeline.md), in layers, each importing only those
below it (``pyproject.toml`` checks it):

- ``pipeline``: what pages, the API and commands start (upload, re-score, retry, delete,
  resume); each asks the conductor, then sends the work it leaves;
- ``tasks``: the Celery tasks, each calling the conductor and the readers for its step and
  sending the work that step leaves (``sending``: after commit, by the task object);
- ``conductor``: a submission's way through: create, claim, plan ranges, claim a range,
  settle, finish, re-score, resume; it returns the work it leaves and sends nothing;
- ``reading``: the file (or one range of it) read into stored runs; ``chunks``: a chunk
  of runs scored;
- ``store``: the run store, what is stored of a submission's runs and its counts;
- ``bulk``, ``uploads``, ``sending``, ``garbage``: rows written in bulk, the stored file,
  sending tasks, the collector's thresholds.

May import: ``scoring.results`` (the summaries a finished submission stores),
``scoring.models``, ``scoring.runfiles``, ``scoring.importers``, ``scoring.environments``,
``scoring.matcher``, ``cases``.
"""
