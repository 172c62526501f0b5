"""Generators of realistic and adversarial suites and runs for the benchmarks (fixed seeds).

Realistic: cases with 3-8 predicates over tools with nested arguments; runs with 5-20 calls
in 2-6 batches, most of them passing, the rest broken the ways agents break (a wrong or
missing argument, a dropped call, a call too early, extra calls, a wrong answer, an error).
"""

from __future__ import annotations

import random

import orjson

TOOLS = [
    "search_flights", "get_reservation", "update_reservation", "cancel_reservation",
    "get_user", "send_email", "lookup_order", "issue_refund", "get_weather", "read_file",
    "write_file", "list_directory", "create_ticket", "calculate", "translate_text",
]  # fmt: skip
CITIES = ["Paris", "Tokyo", "Lagos", "Lima", "Oslo", "Seoul", "Austin", "Cairo"]


def _arguments(rng: random.Random) -> dict:
    """Arguments with some nesting: scalars, a list, and an object holding a list."""
    args = {
        "id": f"R{rng.randint(1000, 9999)}",
        "city": rng.choice(CITIES),
        "count": rng.randint(1, 9),
    }
    if rng.random() < 0.6:
        args["options"] = {
            "cabin": rng.choice(["economy", "business"]),
            "dates": [f"2024-05-{rng.randint(10, 28)}", f"2024-06-{rng.randint(10, 28)}"],
        }
    if rng.random() < 0.4:
        args["passengers"] = [
            {"first_name": rng.choice(["Mia", "Ali", "Noa"]), "age": rng.randint(2, 80)}
            for _ in range(rng.randint(1, 3))
        ]
    return args


def realistic_case(rng: random.Random, key: str) -> dict:
    n_predicates = rng.randint(3, 8)
    n_expected = rng.randint(2, min(5, n_predicates - 1))
    expected = []
    for i in range(n_expected):
        args = _arguments(rng)
        required = {k: args[k] for k in rng.sample(sorted(args), rng.randint(1, len(args)))}
        expected.append(
            {
                "name": rng.choice(TOOLS),
                "required_args": required,
                "ordered": rng.random() < 0.5,
                "depends_on_result": i > 0 and rng.random() < 0.3,
                "_arguments": args,  # what a correct agent sends (stripped before loading)
            }
        )
    answer = rng.randint(10, 999)
    pool = [
        {"type": "called_tool", "tool": expected[0]["name"]},
        {"type": "did_not_call_tool", "tool": "delete_everything"},
        {"type": "tool_call_count", "max": 25},
        {"type": "called_tools_in_order", "tools": [e["name"] for e in expected[:2]]},
        {"type": "final_text_contains", "text": "done", "case_insensitive": True},
        {"type": "final_text_matches", "regex": r"\b(done|booked)\b"},
        {"type": "final_number_equals", "value": answer, "tolerance": 0.5},
        {"type": "no_error"},
        {"type": "called_tool_with", "tool": expected[-1]["name"],
         "args": {"city": expected[-1]["_arguments"]["city"]}},
    ]  # fmt: skip
    expectations = rng.sample(pool, n_predicates - n_expected)
    return {
        "key": key,
        "title": f"Case {key}",
        "prompt": "Book what the customer asks for.",
        "tags": [rng.choice(["booking", "support", "files"])],
        "expected_calls": expected,
        "extra_calls": "allow",
        "expectations": expectations,
        "_answer": answer,
    }


def realistic_suite(rng: random.Random, n_cases: int = 50) -> dict:
    return {
        "schema": "casebook.suite/1",
        "name": "bench-realistic",
        "cases": [realistic_case(rng, f"case-{i:03d}") for i in range(n_cases)],
    }


def strip_private(suite: dict) -> dict:
    """The suite as a file holds it: without the generator's notes."""
    return {
        **suite,
        "cases": [
            {
                **{k: v for k, v in case.items() if not k.startswith("_")},
                "expected_calls": [
                    {k: v for k, v in call.items() if not k.startswith("_")}
                    for call in case["expected_calls"]
                ],
            }
            for case in suite["cases"]
        ],
    }


def realistic_run(rng: random.Random, case: dict, trial: int) -> dict:
    """A run of ``case``: 5-20 calls in 2-6 batches, about 60% of runs passing.

    A correct agent makes the expected calls in order, waits for a result before a call
    that depends on it, and mixes in other calls. Breakage is injected at fixed rates: a
    wrong argument (10%), a missing call (8%), two calls swapped (7%), a dependent call in
    the same batch as the call it depends on (5%); independently a wrong final number
    (12%) and a run error (4%).
    """
    expected = case["expected_calls"]
    calls = [{"name": e["name"], "arguments": dict(e["_arguments"])} for e in expected]
    depends = [e["depends_on_result"] for e in expected]
    breakage = rng.random()
    if breakage < 0.10:
        rng.choice(calls)["arguments"]["city"] = "Atlantis"
    elif breakage < 0.18:
        victim = rng.randrange(len(calls))
        calls.pop(victim)
        depends.pop(victim)
    elif breakage < 0.25 and len(calls) > 1:
        i = rng.randrange(len(calls) - 1)
        calls[i], calls[i + 1] = calls[i + 1], calls[i]
    together = breakage >= 0.25 and breakage < 0.30
    # Other calls go anywhere; a depending call starts a new batch unless broken.
    sequence = [(call, dep and not together) for call, dep in zip(calls, depends, strict=True)]
    for _ in range(rng.randint(max(0, 5 - len(calls)), 20 - len(calls))):
        extra = {"name": rng.choice(TOOLS[:8]), "arguments": _arguments(rng)}
        sequence.insert(rng.randint(0, len(sequence)), (extra, False))
    required_cuts = {i for i, (_, must_cut) in enumerate(sequence) if must_cut and i > 0}
    n_batches = max(rng.randint(2, 6), len(required_cuts) + 1)
    optional = [i for i in range(1, len(sequence)) if i not in required_cuts]
    extra_cuts = rng.sample(optional, min(len(optional), n_batches - 1 - len(required_cuts)))
    cuts = sorted(required_cuts | set(extra_cuts))
    flat = [call for call, _ in sequence]
    batches = [flat[a:b] for a, b in zip([0, *cuts], [*cuts, len(flat)], strict=True)]
    for b, batch in enumerate(batches):
        for p, call in enumerate(batch):
            call["id"] = f"call_{b}_{p}"
            call["result"] = {"ok": True, "rows": rng.randint(0, 5)}
    answer = case["_answer"] if rng.random() >= 0.12 else case["_answer"] + 7
    return {
        "case": case["key"],
        "trial": trial,
        "batches": batches,
        "final_text": f"All done: booked {rng.randint(1, 3)} seats, total ${answer}.",
        "error": None if rng.random() >= 0.04 else "timeout after 60s",
        "meta": {"model": "bench-model"},
    }


def with_usage(run: dict) -> dict:
    """``run`` with the run-level usage an agent's recording gives (docs/formats.md#usage),
    its figures made from the run's own shape (no draw from the generator: the runs stay
    the runs made without it): a model call per batch and one for the answer, each reading
    the conversation so far."""
    calls = sum(len(batch) for batch in run["batches"])
    turns = len(run["batches"]) + 1
    input_tokens = sum(900 + 150 * turn for turn in range(turns)) + 40 * calls
    output_tokens = 45 * calls + 30
    run["usage"] = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": 600 * (turns - 1),
        "reasoning_tokens": None,
        "model_calls": turns,
        "duration_ms": 700.0 * turns + 120.0 * calls,
        "cost_usd": round(input_tokens * 2.5e-6 + output_tokens * 1e-5, 6),
        "models": ["bench-model"],
    }
    return run


def _as_matcher(name: str, value):
    """The same expectation as ``value``, as an author using argument matchers writes it."""
    if name == "id":
        return {"$regex": "R[0-9]{4}"}
    if name == "city":
        return {"$text": {"value": value.upper(), "ignore": ["case"]}}
    if name == "count":
        return {"$one_of": [value, value + 1]}
    if name == "options":
        return {"$subset": {"cabin": value["cabin"]}}
    if name == "passengers":
        return [
            {
                "first_name": {"$type": "string"},
                "age": {"$approx": {"value": p["age"], "tolerance": 1}},
            }
            for p in value
        ]
    return value


def with_matchers(suite: dict, share: float = 1 / 3, seed: int = 42) -> dict:
    """The suite with a ``share`` of its expected values written as argument matchers
    (docs/matcher.md#argument-matchers), as an author relaxes the values that vary (ids,
    names, free text): the same runs pass and fail, so the suites compare the matchers'
    cost. ``share=1`` writes every value as a matcher."""
    rng = random.Random(seed)

    def relax(args: dict) -> dict:
        return {k: _as_matcher(k, v) if rng.random() < share else v for k, v in args.items()}

    cases = []
    for case in suite["cases"]:
        calls = [{**c, "required_args": relax(c["required_args"])} for c in case["expected_calls"]]
        expectations = [
            {**item, "args": relax(item["args"])} if item["type"] == "called_tool_with" else item
            for item in case["expectations"]
        ]
        cases.append({**case, "expected_calls": calls, "expectations": expectations})
    return {**suite, "name": f"{suite['name']}-matchers", "cases": cases}


def realistic_stream(
    seed: int,
    n_runs: int,
    n_cases: int = 50,
    runs_seed: int | None = None,
    usage: bool = False,
):
    """(suite document, iterator of ``n_runs`` run documents over ``n_cases`` cases); the
    runs are made one at a time, so a large file can be written without holding it. With
    ``runs_seed``, other runs of the same suite (another agent's, or the same one's again);
    with ``usage``, each carries its usage (``with_usage``)."""
    rng = random.Random(seed)
    suite = realistic_suite(rng, n_cases)
    if runs_seed is not None:
        rng = random.Random(runs_seed)

    def runs():
        for i in range(n_runs):
            run = realistic_run(rng, suite["cases"][i % n_cases], trial=i // n_cases)
            yield with_usage(run) if usage else run

    return strip_private(suite), runs()


def realistic_pairs(seed: int, n_runs: int, n_cases: int = 50):
    """(suite document, list of run documents): ``realistic_stream``, held in a list."""
    suite, runs = realistic_stream(seed, n_runs, n_cases)
    return suite, list(runs)


def adversarial_cases() -> list[tuple[str, dict, dict]]:
    """(name, case document, run document) triples that break naive assignment searches."""
    out = []

    def case(n, *, ordered, depends, forbid=False, name="step"):
        calls = [
            {"name": name, "required_args": {"x": 1}, "ordered": ordered,
             "depends_on_result": depends and i > 0}
            for i in range(n)
        ]  # fmt: skip
        return {"key": "k", "expected_calls": calls, "extra_calls": "forbid" if forbid else "allow"}

    def run(batch_sizes, name="step"):
        batches = [
            [{"name": name, "arguments": {"x": 1}} for _ in range(size)] for size in batch_sizes
        ]
        return {"case": "k", "batches": batches}

    for ordered in (False, True):
        for depends in (False, True):
            for forbid in (False, True):
                for count in (39, 41):
                    shapes = {
                        "one per batch": [1] * count,
                        "one batch": [count],
                        "pairs": [2] * (count // 2) + [1] * (count % 2),
                    }
                    for shape, sizes in shapes.items():
                        label = (
                            f"40 identical vs {count} {shape}"
                            f"{', ordered' if ordered else ''}{', dependent' if depends else ''}"
                            f"{', forbid extras' if forbid else ''}"
                        )
                        out.append(
                            (
                                label,
                                case(40, ordered=ordered, depends=depends, forbid=forbid),
                                run(sizes),
                            )
                        )
    for n in (25, 40):
        for ordered in (False, True):
            sizes = [1] * 10 + [2] + [1] * (n - 12)  # n calls in n-1 batches: one pair shares
            label = (
                f"dependent chain of {n}, two calls share a batch{', ordered' if ordered else ''}"
            )
            out.append((label, case(n, ordered=ordered, depends=True), run(sizes)))
    # Alternating dependent pairs whose late halves crowd one batch.
    calls = []
    for _ in range(20):
        calls.append({"name": "open", "required_args": {}, "ordered": False})
        calls.append({"name": "read", "required_args": {}, "depends_on_result": True})
    batches = [
        [{"name": "open", "arguments": {}} for _ in range(20)],
        [{"name": "read", "arguments": {}} for _ in range(19)],
    ]
    out.append(
        (
            "20 dependent pairs, 19 results",
            {"key": "k", "expected_calls": calls},
            {"case": "k", "batches": batches},
        )
    )
    # Mixed ordered/unordered identical calls spread over many small batches.
    calls = [{"name": "step", "required_args": {}, "ordered": i % 2 == 0} for i in range(40)]
    out.append(
        (
            "40 identical, every other ordered, 39 calls",
            {"key": "k", "expected_calls": calls},
            run([3] * 13),
        )
    )
    return out


def _calling(calls: list[dict]) -> dict:
    """The OpenAI Chat assistant message making ``calls`` (arguments as JSON strings)."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call["id"],
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": orjson.dumps(call["arguments"]).decode(),
                },
            }
            for call in calls
        ],
    }


def as_openai_chat(run: dict) -> dict:
    """The same run as an OpenAI Chat Completions transcript (formats.md): each batch an
    assistant message with ``tool_calls`` (arguments as JSON strings), each result a
    ``tool`` message, the final text a last assistant message."""
    messages = [
        {"role": "system", "content": "You are a travel agent. Use the tools."},
        {"role": "user", "content": f"Please handle request {run['case']}."},
    ]
    for batch in run["batches"]:
        messages.append(_calling(batch))
        messages.extend(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "content": orjson.dumps(call["result"]).decode(),
            }
            for call in batch
        )
    messages.append({"role": "assistant", "content": run["final_text"]})
    line = {"case": run["case"], "trial": run["trial"], "messages": messages, "meta": run["meta"]}
    if run["error"] is not None:
        line["error"] = run["error"]
    return line


def long_conversation(seed: int, case: dict, turns: int = 300) -> dict:
    """A run of ``case`` as an OpenAI Chat line of ``turns`` messages, for the run page: a
    long support conversation whose every fourth message is a user's; the assistant answers,
    calls one to three tools (results shaped like τ-bench's: records with nested lists),
    and the tools answer. The case's expected calls are made along the way, the last with
    a wrong argument, so the page shows matches, extra calls and a miss with its diff."""
    rng = random.Random(seed)
    expected = list(case["expected_calls"])
    messages = [{"role": "system", "content": "You are an airline agent. " * 40}]
    batch = 0
    while len(messages) + 6 < turns - 1:  # a round is at most 6 messages
        messages.append({"role": "user", "content": f"Message {len(messages)}: " * 8})
        messages.append({"role": "assistant", "content": "Let me look that up for you. " * 3})
        calls = []
        for p in range(rng.randint(1, 3)):
            if expected and rng.random() < 0.3:
                call = expected.pop(0)
                arguments = dict(call["_arguments"])
                if not expected:
                    arguments["city"] = "Atlantis"
                name = call["name"]
            else:
                name, arguments = rng.choice(TOOLS[:8]), _arguments(rng)
            calls.append({"id": f"call_{batch}_{p}", "name": name, "arguments": arguments})
        batch += 1
        messages.append(_calling(calls))
        for call in calls:
            result = {
                "reservation_id": call["arguments"].get("id"),
                "flights": [
                    {"flight_number": f"HAT{rng.randint(100, 999)}", "date": "2024-05-20"}
                    for _ in range(rng.randint(1, 4))
                ],
                "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-01-01"}],
                "payment_history": [{"payment_id": f"gift_card_{rng.randint(1000, 9999)}"}],
            }
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": orjson.dumps(result).decode(),
                }
            )
    while len(messages) < turns - 1:
        role = "user" if messages[-1]["role"] != "user" else "assistant"
        messages.append({"role": role, "content": "Anything else? " * 4})
    messages.append({"role": "assistant", "content": "All done."})
    return {"case": case["key"], "trial": 0, "messages": messages, "meta": {"model": "bench"}}
