"""A suite's tool catalog (docs/formats.md#tool-catalog): read, checked, replaced as a new
version."""

from __future__ import annotations

from django.db import transaction

from cases.models import (
    Suite,
    SuiteVersion,
)
from cases.services.documents import suite_document, validate_suite
from cases.services.suites import locked, record_version
from cases.tool_catalog import catalog_tools


def suite_tools(suite: Suite) -> list:
    """The suite's tool catalog (docs/formats.md#tool-catalog): its tool objects as its suite
    file holds them, the pages of an MCP ``tools/list`` merged.

    It is kept with the file's other fields beyond Casebook's columns (``extra``): it is
    versioned, exported and imported with the suite, and no query ever filters on it."""
    return catalog_tools(suite.extra.get("tools"))


def with_tools(suite: Suite, tools: list) -> dict:
    """The suite file of the suite with ``tools`` as its catalog; ``InvalidInput`` by the
    suite file's paths (``tools[2].name: required``) when the catalog breaks its rules."""
    document = {**suite_document(suite), "tools": tools}
    validate_suite(document)
    return document


@transaction.atomic
def replace_tools(suite: Suite, tools: list, user, message: str) -> SuiteVersion:
    """Make ``tools`` the suite's catalog, as a new version (``InvalidInput`` as
    ``with_tools`` says)."""
    suite = locked(suite)
    with_tools(suite, tools)
    suite.extra = {**suite.extra, "tools": tools}
    suite.save()
    return record_version(suite, user, message)
