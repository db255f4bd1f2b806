"""Imported by the local executor before it forks its workers: builds the phone check's
table of every region's plan (the metadata and 245 compiled patterns, about 0.1 CPU-s) once, so
the workers of every phase inherit it instead of each building it on its first number without a
country code."""

from gristmill.stages.pii.phones import _plans

_plans()
