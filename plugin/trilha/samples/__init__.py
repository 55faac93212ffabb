"""trilha.samples."""
