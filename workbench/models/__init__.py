"""Model providers behind the agent loop: the deterministic local model and OpenAI-compatible APIs."""
