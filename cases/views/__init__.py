"""Pages: one module per area. Each view renders a full page, or only its partial when htmx
asks (``request.htmx``); partials are the fragments the full pages include."""
