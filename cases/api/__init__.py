"""Casebook's REST API (docs/api.md): teams, suites, cases and versions as JSON."""
