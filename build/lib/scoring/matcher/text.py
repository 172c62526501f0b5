"""Text rules shared by expectations and argument matchers."""

from __future__ import annotations

# Characters with the Unicode White_Space property. str.strip() would also strip
# U+001C..U+001F, which are not white space.
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# What ``$text`` ignores (docs/matcher.md#argument-matchers); "punctuation" is BFCL's normalisation.
IGNORABLE = ("case", "space", "punctuation")
_DROP_SPACE = str.maketrans("", "", WHITE_SPACE)
_DROP_PUNCTUATION = str.maketrans({**dict.fromkeys(",./-_*^"), "'": '"'})


def normalize(text: str, ignore: frozenset[str]) -> str:
    """``text`` without what ``ignore`` names: white space, punctuation (``,./-_*^``
    dropped and ``'`` read as ``"``), and case (Unicode case folding)."""
    if "punctuation" in ignore:
        text = text.translate(_DROP_PUNCTUATION)
    if "space" in ignore:
        text = text.translate(_DROP_SPACE)
    if "case" in ignore:
        text = text.casefold()
    return text
