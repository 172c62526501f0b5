"""The one page that the site-wide Content Security Policy (settings.CONTENT_SECURITY_POLICY)
does not fit: the API docs, Swagger UI, which sets inline styles. Its files are the app's own
static files (drf-spectacular-sidecar), and its page script is served as a file of its own
(the "split" view), so even there no inline script runs and nothing comes from another
origin; the loosening is for this response only.
"""

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from drf_spectacular.views import SpectacularSwaggerSplitView

api_docs = csp_update({"style-src": [UNSAFE_INLINE]})(
    # Our copy of its page: with the language and a link back (templates/api_docs.html).
    SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api_docs.html")
)
