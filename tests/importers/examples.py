"""The running example of docs/formats.md#run-formats in every format, shaped as each vendor
writes it.

The user asks for the weather in Paris and Tokyo; the agent calls ``get_weather`` for both
in one turn (two parallel calls); Paris answers 18°C and Tokyo fails with a timeout; the
agent then answers in text. Each format's tests start from its example here.
"""

import json

QUESTION = "Weather in Paris and Tokyo?"
ANSWER = "Paris is 18°C; Tokyo is unavailable right now."


def otlp_attributes(**values) -> list:
    """OTLP/JSON ``KeyValue`` attributes; keyword names use ``__`` for dots."""
    attributes = []
    for key, value in values.items():
        if isinstance(value, bool):
            wrapped = {"boolValue": value}
        elif isinstance(value, int):
            wrapped = {"intValue": str(value)}  # 64-bit integers are strings in OTLP/JSON
        elif isinstance(value, float):
            wrapped = {"doubleValue": value}
        elif isinstance(value, list):
            wrapped = {"arrayValue": {"values": [{"stringValue": v} for v in value]}}
        else:
            wrapped = {"stringValue": value}
        attributes.append({"key": key.replace("__", "."), "value": wrapped})
    return attributes


def otlp_span(span_id, parent, name, start, end, *, error=None, **attributes) -> dict:
    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 1 if name.startswith(("invoke_agent", "execute_tool")) else 3,
        "startTimeUnixNano": str(1767225600_000000000 + start * 1_000_000),
        "endTimeUnixNano": str(1767225600_000000000 + end * 1_000_000),
        "attributes": otlp_attributes(**attributes),
        "status": {"code": 2, "message": error} if error else {"code": 1},
    }


def otlp_export(*spans, service="weather-agent") -> dict:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": otlp_attributes(service__name=service)},
                "scopeSpans": [
                    {
                        "scope": {
                            "name": "opentelemetry.instrumentation.genai",
                            "version": "0.4b0",
                        },
                        "spans": list(spans),
                        "schemaUrl": "https://opentelemetry.io/schemas/1.37.0",
                    }
                ],
            }
        ]
    }


def openai_chat() -> dict:
    return {
        "case": "weather",
        "messages": [
            {"role": "system", "content": "You are a helpful weather assistant."},
            {"role": "user", "content": QUESTION},
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_a1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    },
                    {
                        "id": "call_b2",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Tokyo"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a1", "content": '{"temp_c": 18}'},
            {"role": "tool", "tool_call_id": "call_b2", "content": '{"error": "timeout"}'},
            {"role": "assistant", "content": ANSWER, "refusal": None},
        ],
    }


def response(response_id: str, output: list, *, status: str = "completed", **fields) -> dict:
    """A Responses API response object as the SDK's ``model_dump()`` writes it."""
    return {
        "id": response_id,
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": "gpt-4.1-2025-04-14",
        "output": output,
        "parallel_tool_calls": True,
        "usage": {"input_tokens": 82, "output_tokens": 41, "total_tokens": 123},
        **fields,
    }


def function_call(item_id: str, call_id: str, arguments: str, name="get_weather") -> dict:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def function_call_output(call_id: str, output: str) -> dict:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def message(text: str, item_id: str = "msg_3") -> dict:
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def openai_responses() -> dict:
    calls = [
        function_call("fc_1", "call_a1", '{"city":"Paris"}'),
        function_call("fc_2", "call_b2", '{"city":"Tokyo"}'),
    ]
    return {
        "case": "weather",
        # The last request's input, as a stateless client sends it: the whole conversation.
        "input": [
            {"role": "user", "content": QUESTION},
            *calls,
            function_call_output("call_a1", '{"temp_c": 18}'),
            function_call_output("call_b2", '{"error": "timeout"}'),
        ],
        "responses": [
            response(
                "resp_1",
                [
                    {"type": "reasoning", "id": "rs_1", "summary": []},
                    *calls,
                ],
            ),
            response("resp_2", [message(ANSWER)]),
        ],
    }


def anthropic() -> dict:
    return {
        "case": "weather",
        "messages": [
            {"role": "user", "content": QUESTION},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking both cities."},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "get_weather",
                        "input": {"city": "Tokyo"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "18C"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": "timeout",
                        "is_error": True,
                    },
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
        ],
    }


def gemini() -> dict:
    return {
        "case": "weather",
        "contents": [
            {"role": "user", "parts": [{"text": QUESTION}]},
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {
                            "id": "fc-1",
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                        },
                        "thoughtSignature": "CtIBAVSoXO4=",
                    },
                    {
                        "functionCall": {
                            "id": "fc-2",
                            "name": "get_weather",
                            "args": {"city": "Tokyo"},
                        }
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "id": "fc-1",
                            "name": "get_weather",
                            "response": {"temp_c": 18},
                        }
                    },
                    {
                        "functionResponse": {
                            "id": "fc-2",
                            "name": "get_weather",
                            "response": {"error": "timeout"},
                        }
                    },
                ],
            },
            {"role": "model", "parts": [{"text": ANSWER}]},
        ],
    }


def otel() -> dict:
    """An agent framework's trace: tool spans beside the chat spans under ``invoke_agent``."""
    output_messages = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": ANSWER}],
            "finish_reason": "stop",
        }
    ]
    return {
        "case": "weather",
        **otlp_export(
            otlp_span(
                "a000000000000001",
                "",
                "invoke_agent weather",
                0,
                900,
                gen_ai__operation__name="invoke_agent",
                gen_ai__agent__name="weather",
            ),
            otlp_span(
                "c000000000000001",
                "a000000000000001",
                "chat gpt-4o",
                10,
                300,
                gen_ai__operation__name="chat",
                gen_ai__provider__name="openai",
                gen_ai__request__model="gpt-4o",
                gen_ai__response__finish_reasons=["tool_calls"],
            ),
            otlp_span(
                "t000000000000002",
                "a000000000000001",
                "execute_tool get_weather",
                311,
                700,
                error="timeout",
                gen_ai__operation__name="execute_tool",
                gen_ai__tool__name="get_weather",
                gen_ai__tool__call__id="call_b2",
                gen_ai__tool__call__arguments='{"city":"Tokyo"}',
                error__type="TimeoutError",
            ),
            otlp_span(
                "t000000000000001",
                "a000000000000001",
                "execute_tool get_weather",
                310,
                350,
                gen_ai__operation__name="execute_tool",
                gen_ai__tool__name="get_weather",
                gen_ai__tool__call__id="call_a1",
                gen_ai__tool__call__arguments='{"city":"Paris"}',
                gen_ai__tool__call__result='{"temp_c": 18}',
            ),
            otlp_span(
                "c000000000000002",
                "a000000000000001",
                "chat gpt-4o",
                710,
                890,
                gen_ai__operation__name="chat",
                gen_ai__request__model="gpt-4o",
                gen_ai__output__messages=json.dumps(output_messages),
            ),
        ),
    }


def inspect_sample(sample_id="weather", epoch=1) -> dict:
    return {
        "id": sample_id,
        "epoch": epoch,
        "input": QUESTION,
        "target": "18",
        "messages": [
            {"id": "m1", "role": "user", "content": QUESTION, "source": "input"},
            {
                "id": "m2",
                "role": "assistant",
                "content": "",
                "source": "generate",
                "model": "gpt-4o",
                "tool_calls": [
                    {
                        "id": "call_a1",
                        "function": "get_weather",
                        "arguments": {"city": "Paris"},
                        "type": "function",
                    },
                    {
                        "id": "call_b2",
                        "function": "get_weather",
                        "arguments": {"city": "Tokyo"},
                        "type": "function",
                    },
                ],
            },
            {
                "id": "m3",
                "role": "tool",
                "tool_call_id": "call_a1",
                "function": "get_weather",
                "content": "18C",
            },
            {
                "id": "m4",
                "role": "tool",
                "tool_call_id": "call_b2",
                "function": "get_weather",
                "content": "",
                "error": {"type": "timeout", "message": "Command timed out"},
            },
            {
                "id": "m5",
                "role": "assistant",
                "content": [{"type": "text", "text": ANSWER}],
                "source": "generate",
                "model": "gpt-4o",
            },
        ],
        "output": {
            "model": "gpt-4o-2024-08-06",
            "choices": [
                {
                    "message": {"role": "assistant", "content": ANSWER, "source": "generate"},
                    "stop_reason": "stop",
                }
            ],
            "completion": ANSWER,
            "usage": {"input_tokens": 211, "output_tokens": 35, "total_tokens": 246},
        },
        "scores": {"includes": {"value": "C", "answer": ANSWER}},
        "metadata": {},
        "store": {},
        "events": [{"event": "sample_init", "timestamp": "2026-01-01T00:00:00+00:00"}],
        "model_usage": {},
        "total_time": 3.2,
        "working_time": 2.9,
        "uuid": "Wv7xoj2nqRC3",
        "error": None,
        "attachments": {},
        "limit": None,
    }


def inspect_log(*samples, model="openai/gpt-4o") -> dict:
    """An Inspect AI eval log (``EvalLog``) in its own field order: ``eval`` before
    ``samples``."""
    return {
        "version": 2,
        "status": "success",
        "eval": {
            "eval_id": "ZvN8PNvtqTYaBaJh7WfqHa",
            "run_id": "9wN2rdtjzWmHyKqYF6nNKh",
            "created": "2026-01-01T00:00:00+00:00",
            "task": "weather",
            "task_version": 0,
            "dataset": {"name": "weather", "samples": len(samples)},
            "model": model,
            "config": {"epochs": 2},
        },
        "plan": {"name": "plan", "steps": [{"solver": "react", "params": {}}]},
        "results": {"total_samples": len(samples), "completed_samples": len(samples)},
        "stats": {"started_at": "2026-01-01T00:00:00+00:00"},
        "error": None,
        "samples": list(samples),
        "reductions": None,
    }


def tau_bench() -> dict:
    """An element of τ-bench's results array: the trajectory is OpenAI Chat messages."""
    info = {"source": "user", "user_cost": 0.0012, "task": {"user_id": "u1", "actions": []}}
    return {
        "task_id": "weather",
        "reward": 1.0,
        "info": info,
        "traj": openai_chat()["messages"],
        "trial": 0,
    }


# One line of each line format, by format name.
LINES = {
    "openai_chat": openai_chat,
    "openai_responses": openai_responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "otel": otel,
    "inspect_ai": inspect_sample,
    "tau_bench": tau_bench,
}
