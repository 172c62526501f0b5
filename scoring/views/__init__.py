"""scoring's pages, a module a page (or a few related ones). Each view parses the request,
calls a service and renders: the full page, or only its partial when htmx asks
(``request.htmx``). Forms are in ``scoring.forms``.

May import: the services, ``scoring.forms``, the models, the libraries and ``cases``
(its permissions and its pages' shared parts); never ``scoring.api``.
"""
