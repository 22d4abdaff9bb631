"""The context: message lists in the APIs' shapes, eviction, stubs, summaries and
compaction."""
