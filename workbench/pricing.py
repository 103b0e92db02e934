"""Price table (USD per million tokens) used for *estimated* cost. Actual cost comes only from a provider."""

from __future__ import annotations

# Local models cost nothing to run; their notional prices exist so cost pipelines carry real numbers and
# are labelled as estimates everywhere.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "local-extractive": (0.50, 1.50),
    "local-extractive-mini": (0.15, 0.60),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "mock-chat": (0.50, 1.50),
}


def estimate_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Estimated USD cost from the table, or None when the model has no price."""
    prices = PRICES_PER_MTOK.get(model)
    if prices is None:
        return None
    return round(input_tokens / 1e6 * prices[0] + output_tokens / 1e6 * prices[1], 8)
