"""Speed against a baseline: each module names its baseline in its docstring, gives it the same
documents, threads and verification, and measures CPU seconds of both in the same run."""
