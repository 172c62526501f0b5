"""Reading and writing suite JSON without losing what DRF's defaults would change.

DRF's JSON parser keeps the last of two equal keys silently and its renderer writes a
``Decimal`` as a float; suites need duplicate keys reported and numbers kept exactly as
written (docs/api.md#conventions), so the API reads and writes JSON the way the matcher does.
"""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, DataAndFiles, JSONParser
from rest_framework.renderers import JSONRenderer

from scoring.matcher import InvalidInput, dump_json, parse_suite_document

# A suite file larger than this is refused before it is parsed (BFCL's largest category,
# imported as a suite, is about 2 MB).
MAX_SUITE_FILE_BYTES = 20 * 1024 * 1024


class ExactJSONParser(JSONParser):
    """JSON bodies parsed as suite files are: exact numbers, duplicate keys marked."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return parse_suite_document(stream.read() if stream else b"", "body.json")
        except InvalidInput as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


class ExactJSONRenderer(JSONRenderer):
    """Writes numbers exactly as stored; anything orjson cannot write goes through DRF's."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        try:
            return dump_json(data)
        except TypeError:  # lazy translation strings and the like
            return super().render(data, accepted_media_type, renderer_context)


class _RawSuiteFileParser(BaseParser):
    """A suite file sent as the whole body, handed on as the upload field ``file``.

    The file is parsed by the view's serializer, like a multipart upload, so both ways in
    report the same problems; ``filename`` tells ``parse_suite_document`` the format.
    """

    filename = "suite"

    def parse(self, stream, media_type=None, parser_context=None):
        content = stream.read(MAX_SUITE_FILE_BYTES + 1) if stream else b""
        upload = SimpleUploadedFile(self.filename, content, content_type=self.media_type)
        return DataAndFiles({}, {"file": upload})


class SuiteJSONFileParser(_RawSuiteFileParser):
    media_type = "application/json"
    filename = "suite.json"


class SuiteYAMLFileParser(_RawSuiteFileParser):
    media_type = "application/yaml"
    filename = "suite.yaml"


class SuiteTextYAMLFileParser(SuiteYAMLFileParser):
    media_type = "text/yaml"


class SuiteXYAMLFileParser(SuiteYAMLFileParser):
    media_type = "application/x-yaml"


RAW_SUITE_FILE_PARSERS = [
    SuiteJSONFileParser,
    SuiteYAMLFileParser,
    SuiteTextYAMLFileParser,
    SuiteXYAMLFileParser,
]
