"""The Lua scripts `RedisStore` runs: each write with its index entries in one step, and
gc's lock, held only by its owner."""

from __future__ import annotations

__all__ = ["APPEND", "DELETE_HOLDING", "INDEX", "PUT_PAIR", "RELEASE", "RENEW"]

# Indexes are sorted sets under the namespace and "ix:" (apart from the keys, which
# `keys` lists), one score a member (the lowest given); the sums of scores of those
# whose name starts with "#" are in one hash, "ix", by index name (their sizes are
# ZCARD). The scripts below take, after their own KEYS, those of the index entries they
# add (ARGV: score, member and name for each) and then of those they remove (ARGV:
# member and name).
_INDEXING = """
local function add(first, n, at, totals)
  for i = 0, n - 1 do
    local key, j = KEYS[first + i], at + 3 * i
    local score, member, name = ARGV[j], ARGV[j + 1], ARGV[j + 2]
    -- LT: a member that is there keeps the lower score; 1 when it is new
    if redis.call('ZADD', key, 'LT', score, member) == 1 and string.byte(name, 1) == 35 then
      redis.call('HINCRBYFLOAT', totals, name, score)
    end
  end
end
local function remove(first, n, at, totals)
  for i = 0, n - 1 do
    local key, member, name = KEYS[first + i], ARGV[at + 2 * i], ARGV[at + 2 * i + 1]
    if string.byte(name, 1) == 35 then  -- "#": its total goes down by the member's score
      local old = redis.call('ZSCORE', key, member)
      if old then
        redis.call('ZREM', key, member)
        redis.call('HINCRBYFLOAT', totals, name, string.format('%.0f', -tonumber(old)))
      end
    else
      redis.call('ZREM', key, member)
    end
  end
end
"""

# Writes the payload unless present, then the record unless present, each with its index
# entries, in one step that nothing else on the server interleaves with. It refuses (-1)
# while gc holds the exclusive lock, so that gc never sweeps a blob a new record has
# just come to rely on. KEYS: blob, record, lock, totals, then the entries' indexes;
# ARGV: payload, value, number of record entries, of blob entries, then the entries.
PUT_PAIR = (
    _INDEXING
    + """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
local n, m = tonumber(ARGV[3]), tonumber(ARGV[4])
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then add(5 + n, m, 5 + 3 * n, KEYS[4]) end
if redis.call('SET', KEYS[2], ARGV[2], 'NX') then
  add(5, n, 5, KEYS[4])
  return 1
end
return 0
"""
)

# Appends to a list and adds index entries; refuses (-1) while gc holds the lock, so
# that no sighting lands on a record being swept. KEYS: list, lock, totals, indexes.
APPEND = (
    _INDEXING
    + """
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
redis.call('RPUSH', KEYS[1], ARGV[1])
add(4, #KEYS - 3, 2, KEYS[3])
return 1
"""
)

# Adds and removes index entries; inside gc (ARGV[1] its lock token, else ""), only
# while the lock is still its own. KEYS: lock, totals, indexes added, indexes removed;
# ARGV: token, number added, then the entries.
INDEX = (
    _INDEXING
    + """
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
local n = tonumber(ARGV[2])
add(3, n, 3, KEYS[2])
remove(3 + n, #KEYS - 2 - n, 3 + 3 * n, KEYS[2])
return 1
"""
)

# Renews the lock, or deletes it, or deletes a key under it: only while it is ours.
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
DELETE_HOLDING = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
return redis.call('DEL', KEYS[2])
"""
