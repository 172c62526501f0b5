"""The REST API of submissions, results, failures, queues and case drafts (docs/api.md),
and the OTLP receiver (``otlp_receiver``). Views check access through ``cases.permissions``
(as the pages do), validate through serializers and FilterSets, and call the services.

May import: the services (``scoring.ingest``, ``live``, ``results``, ``review``), the
models, the libraries and ``cases``; never ``scoring.views``.
"""
