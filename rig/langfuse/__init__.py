"""Langfuse reconciliation: read each run's trace from Langfuse's public API and set its usage and cost
beside the target's run record and the rig's own estimate (`rig langfuse pull`)."""
