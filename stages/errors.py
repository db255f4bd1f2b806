"""Errors that reach the user as one line (the CLI prints them without a traceback)."""


class GristmillError(Exception):
    """Base class: the message alone must tell the user what is wrong and where."""


class InputError(GristmillError):
    """Malformed input met under `--strict` (otherwise it is written to rejected/input/)."""
