"""gristmill orchestration: config, registry, phases, executors, manifest, CLI."""

__version__ = "0.1.0"
