"""`generate`: an LLM's answers to prompts made from documents, as new synthetic documents."""

from gristmill.stages.generate.stage import Generate

__all__ = ["Generate"]
