"""The state document, its checks, and what carries the work across compactions."""
