"""The pipeline tests' builders, for the bad-input tests that go through the same upload."""

from tests.ingest.pipeline.conftest import demo_suite, team  # noqa: F401 (fixtures)
