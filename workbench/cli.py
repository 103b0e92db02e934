"""`python -m workbench`: serve, add users, list seeded defects."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from workbench.config import ServerConfig
from workbench.defects import DEFECTS
from workbench.dialects import DIALECTS

app = typer.Typer(help="The reference literature workbench (target protocol v1).", no_args_is_help=True,
                  add_completion=False, pretty_exceptions_enable=False)
user_app = typer.Typer(help="Manage accounts.", no_args_is_help=True)
app.add_typer(user_app, name="user")


@app.command()
def serve(
    data: Annotated[Path, typer.Option(help="Data directory (SQLite database, files, secret key).")],
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind (0 picks a free one).")] = 8000,
    chaos_token: Annotated[str | None, typer.Option(
        envvar="WORKBENCH_CHAOS_TOKEN",
        help="Enables the test-only /_chaos control (prefer the environment variable: argv is public).")] = None,
    defect: Annotated[list[str] | None, typer.Option(help="Seeded defect (repeatable; needs --chaos-token).")] = None,
    dialect: Annotated[list[str] | None, typer.Option(
        help="A legitimate variation of the contract to speak (repeatable; `python -m workbench dialects`).")] = None,
    slots: Annotated[int, typer.Option(help="Runs executing at once; more wait in the queue.")] = 8,
    otlp_endpoint: Annotated[str | None, typer.Option(help="OTLP/HTTP endpoint for traces.")] = None,
    trace_file: Annotated[Path | None, typer.Option(help="Write spans as JSON lines to this file.")] = None,
    code_version: Annotated[str | None, typer.Option(help="Code version recorded in checkpoints.")] = None,
    token_delay_ms: Annotated[float | None, typer.Option(help="Delay between streamed pieces.")] = None,
    first_token_delay_ms: Annotated[float | None, typer.Option(help="Delay before the first piece.")] = None,
    port_file: Annotated[Path | None, typer.Option(help="Write the bound port here once listening.")] = None,
    drain_timeout_s: Annotated[float, typer.Option(help="On SIGTERM, let runs finish this long.")] = 10.0,
    model_base_url: Annotated[str | None, typer.Option(
        help="An OpenAI-compatible base URL (…/v1) to answer with instead of the built-in local model.")] = None,
    model: Annotated[str, typer.Option(help="The model id asked of --model-base-url.")] = "rig-mock",
) -> None:
    """Run the workbench server (uvicorn with uvloop and httptools)."""
    import uvicorn

    from workbench.app import create_app
    from workbench.serving import serve_app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    config = ServerConfig(data_dir=data, host=host, port=port, chaos_token=chaos_token, defects=defect or [],
                          dialects=dialect or [], slots=slots, otlp_endpoint=otlp_endpoint, trace_file=trace_file,
                          code_version=code_version, drain_timeout_s=drain_timeout_s)
    if model_base_url:
        config.default_provider, config.default_model, config.default_base_url = "openai", model, model_base_url
    if token_delay_ms is not None:
        config.runtime.token_delay_ms = token_delay_ms
    if first_token_delay_ms is not None:
        config.runtime.first_token_delay_ms = first_token_delay_ms
    try:
        application = create_app(config)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    serve_app(uvicorn, application, config, port_file)


@user_app.command("add")
def user_add(
    names: Annotated[list[str], typer.Argument(help="User name(s).")],
    data: Annotated[Path, typer.Option(help="Data directory.")],
    password: Annotated[str | None, typer.Option(
        help="Password of a single user (stored as a scrypt hash). Without it, one password per name is read "
             "from standard input, a line each, so no password shows in the process list.")] = None,
) -> None:
    """Create accounts (or reset their passwords); prints each user id."""
    import sys

    from workbench.accounts import add_user

    if password is not None:
        if len(names) != 1:
            typer.echo("error: --password sets one user's password; give one name, or pass passwords on stdin",
                       err=True)
            raise typer.Exit(2)
        passwords = [password]
    else:
        passwords = [line.rstrip("\r\n") for line in sys.stdin.readlines()]
        if len(passwords) != len(names) or not all(passwords):
            typer.echo(f"error: {len(names)} name(s) but {len(passwords)} password line(s) on stdin", err=True)
            raise typer.Exit(2)
    for name, secret in zip(names, passwords, strict=True):
        typer.echo(add_user(data, name, secret))


@app.command("seal")
def seal_data(data: Annotated[Path, typer.Option(help="Data directory of a stopped server.")]) -> None:
    """Remove what a shared copy of the data directory must not hold: the secret key, encrypted API keys, password
    hashes and login tokens (a later `serve` and `user add` set them again)."""
    from workbench.accounts import seal

    typer.echo(", ".join(seal(data)) or "nothing to remove")


@app.command()
def defects() -> None:
    """List the seeded defects (tests only) and the promise each one breaks."""
    width = max(len(n) for n in DEFECTS)
    for name, what in DEFECTS.items():
        typer.echo(f"{name.ljust(width)}  {what}")


@app.command()
def dialects() -> None:
    """List the dialects: legitimate variations of the contract the server can speak (`serve --dialect`)."""
    width = max(len(n) for n in DIALECTS)
    for name, what in DIALECTS.items():
        typer.echo(f"{name.ljust(width)}  {what}")


def main() -> None:
    app(prog_name="python -m workbench")


if __name__ == "__main__":
    main()
