"""Casebook's REST API (DESIGN.md §8): teams, suites, cases and versions as JSON."""
