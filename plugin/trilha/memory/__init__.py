"""The memory service (seed 004 REQ-RETR-018): conversation turns and the retrieval job log."""
