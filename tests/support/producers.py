"""The producers' fixtures (tests/fixtures/<format>/, written by the real SDKs against
``tests/fixtures/producers/fake_server.py``) and the suite their runs are scored against."""

from pathlib import Path

from tests.fixtures.producers.fake_server import CALLS, FINAL_TEXT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PARIS_AND_TOKYO = [
    {"name": name, "required_args": arguments, "ordered": True} for _, name, arguments in CALLS
]
# What openai-v2 needs to record content (its spans name their scope in OTLP/JSON; the
# SDK's own JSON leaves the scope out, so the notes fall back to the generic advice).
OPENAI_V2_SETTING = (
    "set OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY"
)
GENERIC_SETTING = (
    "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or what your "
    "instrumentation needs to record message content (docs/live-traces.md#content)"
)
SUITE = {
    "schema": "casebook.suite/1",
    "name": "producers",
    "cases": [
        {
            "key": "weather-calls",
            "expected_calls": PARIS_AND_TOKYO,
            "expectations": [{"type": "tool_call_count", "min": 2, "max": 2}],
        },
        {
            "key": "weather-calls-camel",
            "expected_calls": PARIS_AND_TOKYO,
            "expectations": [{"type": "tool_call_count", "min": 2, "max": 2}],
        },
        {
            "key": "weather-answer",
            "expectations": [
                {"type": "no_tool_calls"},
                {"type": "final_text_equals", "text": FINAL_TEXT},
            ],
        },
        {"key": "weather-truncated", "expectations": [{"type": "final_text_contains", "text": ""}]},
        {
            "key": "weather",
            "expected_calls": PARIS_AND_TOKYO,
            "expectations": [{"type": "final_text_equals", "text": FINAL_TEXT}],
        },
        {
            "key": "weather-pair",
            "expected_calls": PARIS_AND_TOKYO,
            "expectations": [{"type": "final_text_equals", "text": FINAL_TEXT}],
        },
        {"key": "weather-no-content", "expected_calls": PARIS_AND_TOKYO},
    ],
}
