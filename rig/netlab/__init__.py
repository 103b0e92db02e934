"""Hosts made of network namespaces on one machine, and distributed load runs across them (`rig lab`)."""
