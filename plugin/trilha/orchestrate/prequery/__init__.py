"""Pre-query (seed 004 REQ-RETR-002): intent, focus entities, time horizon, constraints."""
