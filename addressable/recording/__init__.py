"""Recording: wrap a call, record it, read it back, replay it by id; bundles of records.

Knows the store; nothing of messages, compaction or the state document."""
