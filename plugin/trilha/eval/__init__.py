"""trilha.eval."""
