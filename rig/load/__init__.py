"""`rig load`: Locust load runs against a target, single-process or distributed."""
