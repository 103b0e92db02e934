"""An optional LLM judge: an OpenAI-compatible `/chat/completions` endpoint proposes scores per sheet.

The judge is asked for JSON `{"scores": {"E1": 0-4 | "U" | "N/A", …}, "reason": "…"}`. What it answers is
kept as a *proposed* score with its reason; an unreachable judge or an unreadable answer is recorded as
the proposal's error, and the sheet keeps its empty scores.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from rig.quality.sheets import JudgeSheet, Proposal

SYSTEM = ("You are a strict judge of a literature assistant's answer. Score each listed dimension on its own "
          "from 0 to 4 by the scoring rules, or U when the evidence shown cannot decide, or N/A. Never average. "
          'Reply with JSON only: {"scores": {"<dimension>": <score>}, "reason": "<one or two sentences>"}.')
_JSON = re.compile(r"\{.*\}", re.S)


def judge_prompt(sheet: JudgeSheet) -> str:
    cites = "\n".join(f"[{c.marker}] {c.paper_id} p.{c.page}: {c.hit_text[:500]}" for c in sheet.citations)
    return (f"Dimensions: {', '.join(sheet.dimensions)}\nQuestion: {sheet.prompt}\nAnswer:\n{sheet.answer or '(none)'}"
            f"\nCited evidence:\n{cites or '(none)'}\nGround truth:\n{sheet.ground_truth}\nRules:\n{sheet.rules}")


def parse_proposal(model: str, text: str, dimensions: list[str]) -> Proposal:
    m = _JSON.search(text or "")
    if not m:
        return Proposal(model=model, error=f"the judge answered no JSON: {text[:200]!r}")
    try:
        data: Any = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        return Proposal(model=model, error=f"the judge's JSON is invalid: {exc}")
    raw = data.get("scores") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        return Proposal(model=model, error="the judge's JSON has no scores object")
    scores: dict[str, int | str] = {}
    for d in dimensions:
        v = raw.get(d)
        if isinstance(v, int) and 0 <= v <= 4:
            scores[d] = v
        elif isinstance(v, str) and v.strip() in ("U", "N/A"):
            scores[d] = v.strip()
    missing = [d for d in dimensions if d not in scores]
    return Proposal(model=model, scores=scores, reason=str(data.get("reason", ""))[:1000],
                    error=f"no valid score for {missing}" if missing else None)


def propose(sheet: JudgeSheet, base_url: str, model: str, api_key: str | None = None,
            timeout_s: float = 60.0) -> Proposal:
    """Ask the judge endpoint for proposed scores of one sheet."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    body = {"model": model, "temperature": 0, "stream": False,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": judge_prompt(sheet)}]}
    try:
        r = httpx.post(base_url.rstrip("/") + "/chat/completions", json=body, headers=headers, timeout=timeout_s)
        r.raise_for_status()
        text = r.json()["choices"][0]["message"]["content"]
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        return Proposal(model=model, error=f"judge request failed: {type(exc).__name__}: {str(exc)[:200]}")
    return parse_proposal(model, text, sheet.dimensions)
