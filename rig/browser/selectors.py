"""The selector map: where a target's web UI keeps the elements the rig touches and watches."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from rig.yamlfile import load_yaml_model

DEFAULT = Path(__file__).resolve().parent.parent / "selectors" / "workbench.yaml"


class LoginSelectors(BaseModel):
    model_config = ConfigDict(extra="forbid")

    username: str
    password: str
    submit: str
    error: str | None = None


class SelectorMap(BaseModel):
    """CSS selectors of one UI; `done` must match only once a run has ended (its state in `done_state_attr`)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    path: str = "/"
    login: LoginSelectors
    logged_in: str
    logout: str
    project: str | None = None
    paper: str | None = None  # a UI where material is not picked per session leaves it out (no scope in the browser)
    paper_id_attr: str = "data-paper-id"
    doc_id_attr: str = "data-doc-id"
    new_session: str | None = None  # without it the page after login is the session (a new chat)
    session_id: str | None = None
    session_item: str | None = None
    prompt: str
    send: str
    stop: str | None = None
    regenerate: str | None = None
    message: str | None = None
    status: str
    answer: str
    run_id: str | None = None  # where the page shows the run's id (without it, browser times stand alone)
    done: str
    done_state_attr: str = "data-state"
    branch_count: str | None = None
    citation: str | None = None
    citation_viewer: str | None = None
    citation_page: str | None = None
    citation_match: str | None = None
    citation_text: str | None = None
    citation_highlight: str | None = None
    export: str | None = None
    export_view: str | None = None


def load_selectors(path: Path | None = None) -> SelectorMap:
    """Read a selector map (the workbench's when `path` is None; a packaged one by name, e.g. `openwebui`); a bad
    file is a ConfigError naming the key."""
    source = path or DEFAULT
    if path is not None and not path.exists() and (DEFAULT.parent / f"{path.name}.yaml").exists():
        source = DEFAULT.parent / f"{path.name}.yaml"
    return load_yaml_model(source, SelectorMap, what="selector map", flag="--selectors",
                           shape_fix="see rig/browser/selectors/workbench.yaml for the expected shape")
