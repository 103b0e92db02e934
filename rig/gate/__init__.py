"""The reliability gate: case registry, target session, case context and runner."""
