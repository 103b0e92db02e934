"""`rig chaos`: the fault proxies, schedule validation, and the fault vocabulary (a `rig.cli` plug-in)."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from chaos.http_proxy import HttpFaultProxy
from chaos.llm_proxy import LlmFaultProxy
from chaos.net_proxy import NetFaultProxy
from chaos.proxy_base import FaultProxy
from chaos.schedule import load_schedule
from rig.cli import fail
from rig.cli import terminal as console
from rig.clock import parse_duration
from rig.errors import RigError
from rig.faults import MODES, TARGET_POINTS, LinkFault, ProxyFault

app = typer.Typer(help="Fault injection: LLM and HTTP fault proxies, schedules, the fault vocabulary.",
                  no_args_is_help=True)


def _listen(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not port.isdigit():
        console.print(f"[red]error:[/] --listen {listen!r} is not HOST:PORT (e.g. 127.0.0.1:8090)")
        raise typer.Exit(2)
    return host or "127.0.0.1", int(port)


@app.command("llm-proxy")
def llm_proxy(
    upstream: Annotated[str, typer.Option(help="OpenAI-compatible base URL (…/v1), or `mock` for the built-in model.")]
    = "mock",
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on.")] = "127.0.0.1:8090",
    rule: Annotated[list[str] | None, typer.Option(
        help='A rule as JSON, repeatable: \'{"mode":"status","status":429,"retry_after_s":1,"probability":0.2}\'.')]
    = None,
    seed: Annotated[int, typer.Option(help="Seed of the rules' dice.")] = 1,
    record: Annotated[Path | None, typer.Option(help="Append every request (timings, usage, faults) to this JSONL.")]
    = None,
    mock_chunk_ms: Annotated[float, typer.Option(help="Mock model: delay between streamed chunks.")] = 0.0,
    mock_first_token_ms: Annotated[float, typer.Option(help="Mock model: delay before the first token.")] = 0.0,
) -> None:
    """Serve an OpenAI-compatible fault proxy; point the target's model base_url at http://HOST:PORT/v1.

    Rules can also be added and cleared while it runs: POST/DELETE http://HOST:PORT/_rig/rules.
    """

    proxy = LlmFaultProxy(upstream, seed=seed, record_path=record, mock_chunk_ms=mock_chunk_ms,
                          mock_first_token_ms=mock_first_token_ms)
    _serve(proxy, listen, rule or [])


@app.command("http-proxy")
def http_proxy(
    upstream: Annotated[str, typer.Option(help="Base URL of the service behind the proxy.")],
    listen: Annotated[str, typer.Option(help="HOST:PORT to listen on.")] = "127.0.0.1:8091",
    rule: Annotated[list[str] | None, typer.Option(
        help='A rule as JSON, repeatable: \'{"mode":"latency","delay_ms":500,"path":"/api/v1/tools/*"}\'.')] = None,
    seed: Annotated[int, typer.Option(help="Seed of the rules' dice.")] = 1,
    record: Annotated[Path | None, typer.Option(help="Append every request to this JSONL.")] = None,
) -> None:
    """Serve an HTTP fault proxy in front of a tool backend or the target: delay, status, reset, slow body, cut."""

    _serve(HttpFaultProxy(upstream, seed=seed, record_path=record), listen, rule or [])


@app.command("net-proxy")
def net_proxy(
    upstream: Annotated[str, typer.Option(help="HOST:PORT of the service behind the relay (the target, on loopback).")],
    listen: Annotated[str, typer.Option(help="HOST:PORT clients reach the service at (the host's address).")],
    control: Annotated[str, typer.Option(help="HOST:PORT of the control API (/_rig/rules).")] = "127.0.0.1:8092",
    rule: Annotated[list[str] | None, typer.Option(
        help='A rule as JSON, repeatable: \'{"mode":"latency","delay_ms":100}\'.')] = None,
    record: Annotated[Path | None, typer.Option(help="On exit, write every connection (peer, bytes, reset) here.")]
    = None,
) -> None:
    """Serve a TCP relay with link faults in front of the target, for hosts without netem: latency (a delay
    line, one way), partition, reset. Schedules use it as `via: network` with `proxies: {network: CONTROL_URL}`."""


    up_host, up_port = _listen(upstream)
    proxy = NetFaultProxy(up_host, up_port)
    for text in rule or []:
        try:
            proxy.add(LinkFault.model_validate_json(text))
        except ValidationError as exc:
            console.print(f"[red]error:[/] rule {text!r}: {exc.errors()[0]['msg']}")
            raise typer.Exit(2) from None
    try:
        relay, url = proxy.start(_listen(listen), _listen(control))
    except OSError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    console.print(f"[bold]network fault proxy[/] tcp://{relay} → tcp://{up_host}:{up_port}; control {url}/_rig/rules; "
                  "Ctrl-C stops")

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    proxy.stop()
    if record is not None:
        record.write_text(json.dumps([link.model_dump(mode="json") for link in proxy.links()], indent=1),
                          encoding="utf-8")


def _serve(proxy: object, listen: str, rules: list[str]) -> None:


    assert isinstance(proxy, FaultProxy)
    host, port = _listen(listen)
    for text in rules:
        try:
            fault = ProxyFault.model_validate_json(text)
        except ValidationError as exc:
            console.print(f"[red]error:[/] rule {text!r}: {exc.errors()[0]['msg']}")
            raise typer.Exit(2) from None
        if fault.mode not in proxy.modes:
            console.print(f"[red]error:[/] this proxy has no mode {fault.mode!r}; modes: {', '.join(proxy.modes)}")
            raise typer.Exit(2)
        proxy.rules.add(fault)
    console.print(f"[bold]fault proxy[/] http://{host}:{port} → {proxy.upstream}; "
                  f"{len(rules)} rule(s); control at /_rig/rules, log at /_rig/requests; Ctrl-C stops")
    try:
        proxy.serve_forever(host, port)
    except OSError as exc:
        console.print(f"[red]error:[/] cannot listen on {host}:{port}: {exc.strerror or exc}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        pass


@app.command("validate")
def validate(schedule: Annotated[Path, typer.Argument(help="The schedule file.")],
             duration: Annotated[str | None, typer.Option(help="Also check it fits a load run this long.")] = None
             ) -> None:
    """Check a chaos schedule and print its timeline."""

    try:
        s = load_schedule(schedule)
        if duration:
            s.check_fits(parse_duration(duration))
    except RigError as exc:
        raise fail(exc) from None
    table = Table("step", "at s", "until s", "via", "point/mode", title=s.title)
    for step in s.method:
        table.add_row(step.name, f"{step.at_s:g}", "ready" if step.fault.via == "restart" else f"{step.ends_s:g}",
                      step.fault.via, step.fault.label)
    console.print(table)
    console.print("hypothesis: " + ", ".join(f"{p.name} ({p.probe})" for p in s.hypothesis.probes))


@app.command("modes")
def modes() -> None:
    """The fault vocabulary: every channel with its points and modes."""

    table = Table("via", "points", "modes", title="fault vocabulary")
    points = {"target": ", ".join(TARGET_POINTS), "llm_proxy": "llm", "http_proxy": "a path glob",
              "restart": "process", "network": "link"}
    for via, m in MODES.items():
        table.add_row(via, points[via], ", ".join(m))
    console.print(table)
