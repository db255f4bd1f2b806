"""Accuracy against labels: each module names its labels and where they come from."""
