"""The reference target: a literature workbench that implements the rig's target protocol v1."""

__version__ = "0.1.0"
PROTOCOL_VERSION = "1"
PROMPT_VERSION = "p1"
