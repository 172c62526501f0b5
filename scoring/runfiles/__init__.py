"""Run files read and scored with no database: streaming a file of runs in any format
(``reader``), where a record names its case (``casefield``), what a file that gave no run
looks like (``diagnosis``), scoring on several processes (``parallel``), the command
itself (``command``: ``manage.py score`` and ``casebook score``) and its outputs
(``writers``, ``junit``, ``baseline``), and what the runs table keeps of a run's meta
(``runmeta``). Used by both commands and by ingest alike.

May import: ``scoring.matcher``, ``scoring.importers``. No Django (import-linter).
"""
