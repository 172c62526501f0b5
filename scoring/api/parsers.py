"""A run file sent as the whole request body."""

from __future__ import annotations

from django.core.files.uploadedfile import UploadedFile
from rest_framework.parsers import BaseParser, DataAndFiles


class RawRunFileParser(BaseParser):
    """Any body that is not a multipart form is the run file itself. It is handed on as the
    upload ``file`` without being read, so the view streams it into storage."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        if stream is None:  # an empty body
            return DataAndFiles({}, {})
        return DataAndFiles(
            {}, {"file": UploadedFile(stream, name="upload", content_type=media_type)}
        )
