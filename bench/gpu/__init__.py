"""Checks to run where a GPU is lent: short, prepared, and runnable on a CPU machine too."""
