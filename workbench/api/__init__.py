"""HTTP routes of the target protocol, one module per resource."""
