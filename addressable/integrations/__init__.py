"""Small helpers that plug a `Toolkit` and `compact` into agent frameworks.

Each module imports its framework only when called; install it with the matching extra:
`anthropic` (the tool runner), `agents` (the OpenAI Agents SDK), `langgraph`.
"""
