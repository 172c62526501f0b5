"""Uploads into scored submissions (docs/pipeline.md): storing the uploaded file
(``uploads``), a submission's way through the pipeline and its locks (``pipeline``), reading
the file into stored runs (``reading``), scoring a chunk of runs (``chunks``), and writing
rows in bulk (``bulk``).

May import: ``scoring.models``, ``scoring.runfiles``, ``scoring.importers``,
``scoring.matcher``, ``cases``. It enqueues the Celery tasks by name (``pipeline.task_named``):
the tasks sit above it.
"""
