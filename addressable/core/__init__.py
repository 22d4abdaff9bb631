"""The pure core: ids and hashing, records, payloads, tokens, secrets and errors.

Nothing here touches a store, a message list or a tool family."""
