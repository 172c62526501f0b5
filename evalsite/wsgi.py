"""WSGI entry point, for gunicorn: ``gunicorn evalsite.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")

application = get_wsgi_application()
