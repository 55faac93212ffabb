"""The Retrieval Orchestrator (seed 004): RetrievalRequest → pre-query → profile and depth plan →
strategies → a budgeted, cited, permission-safe ContextBundle."""
