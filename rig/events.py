"""The rig's one hook registry: every point where an extension may listen, with its keyword arguments.

    from rig import events

    @events.case_ended.add_listener
    def log_fail(case_id: int, verdict: Verdict) -> None:
        ...

Each hook declares the keyword arguments it passes (their types and meaning are in `EVENTS` and
docs/extending.md). A listener takes any of them by name and nothing else: one that asks for an argument the
hook does not pass is refused when it is added, and firing a hook with other arguments than it declares
raises, so a mistake shows at once instead of a listener that is never called. Listeners run in the order
they were added, in the thread that fires; an exception in a listener reaches the code that fired it (a
`load_init` listener may stop a load run before it starts by raising `ConfigError`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

L = TypeVar("L", bound=Callable[..., Any])


@dataclass(frozen=True)
class Arg:
    """One keyword argument of a hook: its name, its type as written in docs, what it holds."""

    name: str
    type: str
    doc: str


class EventHook:
    """One hook: `add_listener` (also a decorator), `remove_listener`, `listening` for a block, `fire`."""

    def __init__(self, name: str, doc: str, *args: Arg) -> None:
        self.name = name
        self.doc = doc
        self.args = args
        self._names = frozenset(a.name for a in args)
        self._listeners: list[tuple[Callable[..., Any], frozenset[str] | None]] = []

    def __repr__(self) -> str:
        return f"<EventHook {self.name}({', '.join(a.name for a in self.args)}) listeners={len(self._listeners)}>"

    @property
    def has_listeners(self) -> bool:
        """Whether anyone listens (a hot path builds the arguments only then)."""
        return bool(self._listeners)

    @property
    def listeners(self) -> list[Callable[..., Any]]:
        """The listeners, in the order they were added."""
        return [fn for fn, _ in self._listeners]

    def add_listener(self, listener: L) -> L:
        """Add `listener`; it is called with the arguments it names. Raises TypeError for one this hook lacks."""
        self._listeners.append((listener, self._wanted(listener)))
        return listener

    def remove_listener(self, listener: Callable[..., Any]) -> None:
        """Remove `listener` (its first registration); a listener never added is a ValueError."""
        for i, (fn, _) in enumerate(self._listeners):
            if fn is listener or fn == listener:
                del self._listeners[i]
                return
        raise ValueError(f"{listener!r} is not a listener of {self.name}")

    @contextmanager
    def listening(self, listener: L) -> Iterator[L]:
        """`with hook.listening(fn):` adds `fn` for the block and removes it after, whatever happens."""
        self.add_listener(listener)
        try:
            yield listener
        finally:
            self.remove_listener(listener)

    def fire(self, **kwargs: Any) -> None:
        """Call every listener with the arguments it names; `kwargs` must be exactly the hook's arguments."""
        if not self._listeners:
            return
        for call in self.calls(**kwargs):  # calls() checks the arguments
            call()

    def calls(self, **kwargs: Any) -> list[Callable[[], Any]]:
        """Each listener bound to these arguments, not yet called (for a hook whose listeners run in threads)."""
        self._check(kwargs)
        return [_bound(fn, kwargs if wanted is None else {k: kwargs[k] for k in wanted})
                for fn, wanted in list(self._listeners)]

    def _check(self, kwargs: dict[str, object]) -> None:
        if set(kwargs) != self._names:
            raise TypeError(f"{self.name} passes {sorted(self._names)}; fired with {sorted(kwargs)}")

    def _wanted(self, listener: Callable[..., Any]) -> frozenset[str] | None:
        """The arguments `listener` names (None: it takes `**kwargs`, so all of them)."""
        try:
            params = inspect.signature(listener).parameters.values()
        except (TypeError, ValueError):
            raise TypeError(f"{self.name}: {listener!r} has no signature the rig can read") from None
        wanted: set[str] = set()
        takes_all = False
        for p in params:
            if p.kind is p.VAR_KEYWORD:
                takes_all = True
            elif p.kind is p.VAR_POSITIONAL:
                continue
            elif p.name in self._names and p.kind is not p.POSITIONAL_ONLY:
                wanted.add(p.name)
            elif p.default is p.empty:
                raise TypeError(f"{self.name} listener {getattr(listener, '__qualname__', listener)!r} takes "
                                f"{p.name!r}; {self.name} passes {', '.join(sorted(self._names)) or 'nothing'}")
        return None if takes_all else frozenset(wanted)


def _bound(fn: Callable[..., Any], kwargs: dict[str, object]) -> Callable[[], Any]:
    def call() -> Any:
        return fn(**kwargs)

    call.__name__ = getattr(fn, "__name__", "listener")
    return call


def _arg(name: str, type_: str, doc: str) -> Arg:
    return Arg(name, type_, doc)


case_started = EventHook(
    "case_started", "A reliability case (or a quality case-turn) begins: its row in the evidence store is "
    "written, before its first request (a case the run cannot reach begins and ends NOT_RUN at once).",
    _arg("case_id", "int", "the eval set's case number (a quality turn: its ordinal)"),
    _arg("rep", "int", "the repetition, from 1"),
    _arg("title", "str", "the case's record id and title"))
case_ended = EventHook(
    "case_ended", "A case has its verdict; its evidence and items are in the store (reasons redacted, as stored).",
    _arg("case_id", "int", "as in case_started"),
    _arg("rep", "int", "as in case_started"),
    _arg("verdict", "rig.Verdict", "the case's verdict, aggregated from its items"),
    _arg("reason", "str", "the verdict's reason"))
item_recorded = EventHook(
    "item_recorded", "A case recorded one item with its verdict.",
    _arg("case_id", "int", "the case (or turn) the item belongs to"),
    _arg("rep", "int", "the repetition"),
    _arg("item", "rig.Item", "the item: name, verdict, reason, evidence ids"))
exchange = EventHook(
    "exchange", "An adapter sent one request and got its answer (or a transport error); bodies are not yet "
    "redacted, so a listener must not log them as they are.",
    _arg("adapter", "rig.adapters.Adapter", "the adapter that sent it"),
    _arg("exchange", "rig.adapters.Exchange", "method, path, status, bodies, the rig's send and receive stamps"))
run_event = EventHook(
    "run_event", "The rig read one event of a run's stream (gate and quality runs; load users count theirs "
    "in the Locust processes).",
    _arg("run_id", "str", "the target's run id"),
    _arg("event", "rig.measure.events.Event", "the typed event, stamped on arrival (`recv_ns`)"))
span_received = EventHook(
    "span_received", "The rig's OTLP receiver decoded one span the target sent.",
    _arg("receiver", "rig.telemetry.otlp_receiver.OtlpReceiver", "the receiver that got it"),
    _arg("span", "rig.telemetry.otlp_receiver.ReceivedSpan", "ids, name, times, attributes, resource"))
fault_injected = EventHook(
    "fault_injected", "A fault was put on the target (a gate case's fixture or a chaos step).",
    _arg("point", "str", "where: a tool, the model, a proxy, the process"),
    _arg("mode", "str", "what: error, timeout, slow, restart, ..."),
    _arg("source", "str", "`case N` or `chaos step NAME`"),
    _arg("at_ns", "int", "when, on the rig's clock (time.time_ns)"))
window_opened = EventHook(
    "window_opened", "A chaos window began: its fault is in effect until window_closed.",
    _arg("step", "str", "the schedule step's name"),
    _arg("window", "rig.results.chaos.Window", "planned and actual times, what was applied"))
window_closed = EventHook(
    "window_closed", "A chaos window ended (rolled back, a restart finished, or the fault could not be applied).",
    _arg("step", "str", "the schedule step's name"),
    _arg("window", "rig.results.chaos.Window", "as in window_opened, with its end and any error"))
load_init = EventHook(
    "load_init", "`rig load` read its options; nothing has started. Raise ConfigError to refuse the run.",
    _arg("options", "rig.load.options.LoadOptions", "the run's options"))
load_starting = EventHook(
    "load_starting", "The target is up, accounts logged in, the corpus uploaded; Locust is not started yet.",
    _arg("run", "rig.load.session.LoadContext", "options, run directory, evidence store, adapter, plan, accounts"))
load_running = EventHook(
    "load_running", "Locust started. Each listener runs in a thread of its own until `run.stopped` is set.",
    _arg("run", "rig.load.session.LoadContext", "as in load_starting, with `started_at`"))
load_finished = EventHook(
    "load_finished", "Locust ended, the target is still up; a listener may add to the summary before it is "
    "decided and written.",
    _arg("run", "rig.load.session.LoadContext", "as in load_running"),
    _arg("summary", "rig.results.load.LoadSummary", "the run's summary (load.json)"))
load_closed = EventHook(
    "load_closed", "The load run is over, however it ended (finished, stopped, or failed after load_starting): "
    "release what load_starting took.",
    _arg("run", "rig.load.session.LoadContext", "as in load_starting"))

EVENTS: tuple[EventHook, ...] = (case_started, case_ended, item_recorded, exchange, run_event, span_received,
                                 fault_injected, window_opened, window_closed, load_init, load_starting,
                                 load_running, load_finished, load_closed)


def reference() -> str:
    """The hooks and their arguments as a Markdown list (docs/extending.md holds it; a test keeps them equal)."""
    lines = []
    for hook in EVENTS:
        lines.append(f"- `{hook.name}`: {hook.doc}")
        lines += [f"  - `{a.name}` ({a.type}): {a.doc}" for a in hook.args]
    return "\n".join(lines)
