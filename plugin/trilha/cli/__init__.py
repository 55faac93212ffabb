"""The ``trilha`` command."""
