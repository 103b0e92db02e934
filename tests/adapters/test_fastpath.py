"""Plain rules read by hand give JMESPath's own answer, on every shape of input (a dict, a list, a string, null, a
boolean where a number is compared): what `compile_path` hands the stream's rules must not change what they read."""

from __future__ import annotations

import itertools

import jmespath
import pytest

from rig.adapters.http.fastpath import FastPath
from rig.adapters.http.spec import compile_path

PLAIN = ["data.choices[0].delta.content", "data.usage", "data.t", "'answer'", "data == '[DONE]'", "data.t == 'chunk'",
         "@", "data.choices[-1].finish_reason", "`true`", "data.n == `1`", "data.ok == `true`", "data.items[2]"]
INPUTS = [{"data": {"choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}], "usage": {"a": 1}, "t": "chunk",
                    "n": 1, "ok": True, "items": [0, 1, 2]}},
          {"data": "[DONE]"}, {"data": {"choices": []}}, {"data": {"choices": "no"}}, {"data": None}, {},
          {"data": {"t": "other", "n": True, "ok": 1, "items": {"2": 3}}}, {"data": {"choices": [{"delta": None}]}},
          {"data": {"n": 1.0}}, [], "text", None]


@pytest.mark.parametrize("expression", PLAIN)
def test_a_plain_rule_is_read_by_hand_with_jmespaths_answer(expression: str) -> None:
    compiled = compile_path(expression)
    assert isinstance(compiled, FastPath)
    reference = jmespath.compile(expression)
    for value in INPUTS:
        assert compiled.search(value) == reference.search(value), (expression, value)


def test_anything_else_stays_jmespath() -> None:
    for expression in ("join('', data.x)", "data.items[?x == `1`]", "data.a || 'b'", "data.t != 'x'", "data[*].x"):
        assert not isinstance(compile_path(expression), FastPath), expression


def test_every_pair_of_fields_and_indices_agrees() -> None:
    value = {"a": [{"b": [1, {"c": "z"}]}, None], "b": {"a": 0}}
    for steps in itertools.product(["a", "b", "c", "[0]", "[1]", "[-1]"], repeat=3):
        expression = "".join(s if s.startswith("[") else ("." + s if i else s) for i, s in enumerate(steps))
        if expression.startswith("["):
            continue
        assert compile_path(expression).search(value) == jmespath.search(expression, value), expression


def test_a_field_named_with_quotes_and_escapes_is_read_as_named() -> None:
    odd = "it's \"quoted\"\n\\ {x}"
    expression = 'data.' + '"' + odd.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"' + "[0]"
    compiled = compile_path(expression)
    assert isinstance(compiled, FastPath)
    for value in ({"data": {odd: ["hit"]}}, {"data": {odd: "no list"}}, {"data": {"it's": ["x"]}}):
        assert compiled.search(value) == jmespath.search(expression, value), value
    assert compiled.search({"data": {odd: ["hit"]}}) == "hit"
