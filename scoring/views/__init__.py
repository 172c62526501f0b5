"""Pages of submissions and runs, a module a page."""
