"""Format detection across all importers: each line goes to its own format, in the
documented order, and a line no importer knows is refused naming the keys they look for."""

import pytest

from scoring.importers import FORMAT_NAMES, IMPORTERS, detect_format, to_canonical
from scoring.matcher import InvalidInput, load_run

from .examples import LINES


def test_every_format_is_registered_in_detection_order():
    assert FORMAT_NAMES == (
        "canonical",
        "inspect_ai",
        "anthropic",
        "openai_chat",
        "openai_responses",
        "gemini",
        "otel",
        "bfcl",
        "tau_bench",
    )
    for module in IMPORTERS.values():
        assert callable(module.detect)
        assert callable(module.convert)
        assert module.SIGNATURE


@pytest.mark.parametrize("name", sorted(LINES))
def test_each_example_is_detected_as_its_format_and_comes_to_the_same_calls(name):
    line = LINES[name]()
    assert detect_format(line) == name
    run = load_run(to_canonical(line))
    assert [[(c.name, dict(c.arguments)) for c in batch] for batch in run.batches] == [
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]
    ]
    assert run.final_text.startswith("Paris is 18°C")


@pytest.mark.parametrize("name", sorted(LINES))
def test_exactly_one_importer_accepts_each_example_before_its_own(name):
    """Importers earlier in the order than a line's own format must all decline it."""
    line = LINES[name]()
    earlier = FORMAT_NAMES[: FORMAT_NAMES.index(name)]
    assert [other for other in earlier if IMPORTERS[other].detect(line)] == []


def test_canonical_and_bfcl_lines_keep_their_formats():
    assert detect_format({"case": "a", "batches": []}) == "canonical"
    assert detect_format({"id": "simple_0", "result": [{"f": {}}]}) == "bfcl"


def test_a_line_of_no_known_format_lists_the_keys_each_format_is_known_by():
    with pytest.raises(InvalidInput) as caught:
        to_canonical({"case": "a", "steps": []})
    assert caught.value.problems[0].message == (
        "unrecognised run format: expected one of the keys batches, samples, messages, "
        "choices, output or responses, contents or candidates, resourceSpans, resourceLogs or "
        "spans, result, traj"
    )


def test_forcing_a_format_reads_the_line_as_that_format_whatever_it_looks_like():
    line = LINES["anthropic"]()
    with pytest.raises(InvalidInput) as caught:
        to_canonical(line, "gemini")
    assert caught.value.problems[0].path == "contents"
