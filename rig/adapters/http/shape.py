"""An answer's pieces known by their text: a token event that differs from the last one sorted only inside the
answer's own string is sorted the same way, without reading its JSON again.

Most streams send each piece of the answer as the same JSON with one string changed (an OpenAI chunk's
`choices[0].delta.content`); reading that JSON and testing the rules on it is most of what sorting a token costs.
A `Shape` is taken from one token event that was read and sorted in full: its text up to the answer string's
opening quote (`head`) and from its closing quote on (`tail`). A later event whose text is `head`, then the inside
of a JSON string that is not empty (`_STRING`: no quote, backslash or control character but JSON's own escapes),
then `tail`, parses to the same JSON but for that string, which is not empty. The shape is taken only where that
cannot change which rule sorts it:

- the answer's string is found where the rule reads it, proven when the shape is taken: the text with that string
  replaced is read again and the rule finds the replacement (`take`);
- the rule tests only that the string is there (truthy: any non-empty string is), and each rule tried before it
  reads the data alone by a plain path that either misses the string's path or only tests what is there (a
  comparison on the string, or on an object that holds it, could change; `rig.adapters.http.fastpath`).

Anything else — another rule's JMESPath, a rule that reads the event's name or id, a stream whose events are
told apart by id rules — takes no shape, and every event is read in full as before.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

import orjson

from rig.adapters.http.fastpath import FastPath

PROBE = "\x00rig-shape-probe"
# the inside of a JSON string that is not empty: characters but a quote, a backslash or a control character; the
# escapes JSON has; a \u escape of a surrogate only as a pair (a JSON reader refuses one alone)
_STRING = re.compile(r'(?:[^"\\\x00-\x1f\ud800-\udfff]++|\\["\\/bfnrt]|\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}'
                     r'|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})++')
_SPECIAL = re.compile(r'["\\\x00-\x1f\ud800-\udfff]')  # most pieces have none of these: `_STRING` is not needed


class Sorted(Protocol):
    """A stream rule as the sorter holds it: its data-only test (`when_data`), if it has one, and its type."""

    @property
    def when_data(self) -> Any: ...

    @property
    def type(self) -> str: ...


class Shape:
    """The text of a token event around its answer string: `fits(name, text)` says a frame is one like it."""

    __slots__ = ("name", "rule", "head", "tail", "least", "deferred")

    def __init__(self, name: str | None, rule: Any, head: str, tail: str, deferred: Any = None) -> None:
        self.name, self.rule, self.head, self.tail = name, rule, head, tail
        self.deferred = deferred  # what a fitting frame is sorted as (the sorter's, passed through)
        self.least = len(head) + len(tail)  # the text of a fitting event is longer: its string is not empty

    def fits(self, name: str | None, text: str) -> bool:
        """Whether an event of this name and data text is this shape's rule's: its head and tail, and between them the
        inside of a JSON string that is not empty."""
        if name != self.name or len(text) <= self.least or not text.startswith(self.head) \
                or not text.endswith(self.tail):
            return False
        inside, end = len(self.head), len(text) - len(self.tail)
        return _SPECIAL.search(text, inside, end) is None or _STRING.fullmatch(text, inside, end) is not None


def take(name: str | None, text: str, data: Any, rule: Sorted, tried: tuple[Sorted, ...],
         deferred: Any = None) -> Shape | None:
    """The shape of a token event `rule` sorted (`data` its JSON, read from `text`; `tried` the rules tested before
    it, in order; `deferred` what a fitting frame is sorted as), or None where one would not be sound or its string
    cannot be found in its text."""
    test = rule.when_data
    if rule.type != "token" or not isinstance(test, FastPath) or not test.reads_value():
        return None
    steps = test.steps
    assert steps is not None
    for before in tried:
        if before is rule:
            break
        if not isinstance(before.when_data, FastPath) or not before.when_data.misses(steps):
            return None
    value = test.search(data)
    if not isinstance(value, str) or not value:
        return None
    for quoted in dict.fromkeys((orjson.dumps(value).decode(), json.dumps(value))):  # as UTF-8, as ASCII escapes
        at = text.find(quoted)
        for _ in range(2):  # the first two places it is spelled so
            if at < 0:
                break
            end = at + len(quoted)
            try:
                probe = orjson.loads(text[:at] + orjson.dumps(PROBE).decode() + text[end:])
            except orjson.JSONDecodeError:
                probe = None
            if probe is not None and test.search(probe) == PROBE:
                return Shape(name, rule, text[:at + 1], text[end - 1:], deferred)
            at = text.find(quoted, at + 1)
    return None
