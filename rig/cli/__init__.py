"""The `rig` command line."""
