"""A case key as every page shows it (docs/review.md#on-every-page): set apart from the text
around it and from submission numbers, so that τ-bench's keys ``0``…``49`` do not read as
``#3``."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@register.filter
def case_key(key) -> SafeString:
    """``<code class="case-key">`` around the key, escaped."""
    return format_html('<code class="case-key">{}</code>', key)
