"""The one page that the site-wide Content Security Policy (settings.CONTENT_SECURITY_POLICY)
does not fit: the API docs, Swagger UI, which drf-spectacular takes from a CDN and which sets
inline styles. Its page script is served as a file of its own (the "split" view), so even
there no inline script runs; the loosening is for this response only.
"""

from urllib.parse import urlsplit

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.views import SpectacularSwaggerSplitView


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


_swagger_origin = _origin(spectacular_settings.SWAGGER_UI_DIST)

api_docs = csp_update(
    {
        "script-src": [_swagger_origin],
        "style-src": [_swagger_origin, UNSAFE_INLINE],
        "img-src": [_swagger_origin],
    }
)(SpectacularSwaggerSplitView.as_view(url_name="schema"))
