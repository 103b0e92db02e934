"""The questions a load asks: the eval set's by default, a user's JSONL file, or synthetic prompts of a given length.

A prompts file holds one JSON object a line: `{"question": "...", "papers": ["P32"]}` (`papers`, the eval-set paper
ids a session is scoped to, optional). Synthetic prompts are deterministic (a seed) texts of about N tokens, for
measuring a model endpoint at a known input length.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from rig.errors import ConfigError

WORDS = ("reputation", "badge", "buyer", "protection", "seller", "premium", "signal", "market", "evidence", "price",
         "quality", "regulation", "platform", "trust", "auction", "effect", "welfare", "estimate", "sample", "paper")


class Prompt(BaseModel):
    """One question of a prompts file, with the papers its session is scoped to."""

    question: str = Field(min_length=1)
    papers: list[str] = Field(default_factory=list)


def read_prompts(path: Path) -> list[Prompt]:
    """Every prompt of a JSONL file; a line that is not one is a ConfigError naming the line and what is wrong."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the prompts file {path}: {exc}", fix="pass a UTF-8 JSONL file to --prompts"
                          ) from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(Prompt.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as exc:
            raise ConfigError(f"{path}:{n} is not a prompt ({str(exc).splitlines()[0][:160]})",
                              fix='one JSON object a line: {"question": "...", "papers": ["P32"]}') from None
    if not out:
        raise ConfigError(f"{path} holds no prompt", fix='one JSON object a line: {"question": "..."}')
    return out


def synthetic_prompts(tokens: int, count: int = 20, seed: int = 1) -> list[Prompt]:
    """`count` distinct prompts of about `tokens` tokens each (one word is about one token), the same for a seed."""
    draw = random.Random(seed)
    return [Prompt(question=f"Question {i + 1}: " + " ".join(draw.choice(WORDS) for _ in range(max(1, tokens - 3))))
            for i in range(count)]
