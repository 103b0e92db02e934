"""The eval set's 38 reliability cases, one module per reliability module, in the eval set's order."""
