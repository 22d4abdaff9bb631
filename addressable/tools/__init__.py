"""The model's tools: definitions in each API's shape, `handle`, and `replay_result`."""
