"""Chat LLM clients (Groq chat completions), used when an LLM is configured."""
