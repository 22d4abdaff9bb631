"""A store on a Redis server, shared by many workers and machines (the `redis` extra)."""
