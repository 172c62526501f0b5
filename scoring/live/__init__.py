"""Live OpenTelemetry traces (docs/live-traces.md): OTLP/HTTP bodies decoded and answered
(``otlp_codec``), and spans kept as they arrive (``traces``), each trace assembled into a
run of its suite's live submission once complete (``assembly``), by the tasks of ``tasks``.

May import: ``scoring.ingest`` (the live submission goes through the same pipeline),
``scoring.models``, ``scoring.runfiles``, ``scoring.importers``, ``scoring.matcher``,
``cases``.
"""
