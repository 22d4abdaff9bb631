"""The Lua scripts `RedisStore` runs: each write with its index entries in one step, and
gc's lock, held only by its owner."""

from __future__ import annotations

__all__ = ["APPEND", "DELETE_HOLDING", "INDEX", "PUT_PAIR", "RELEASE", "RENEW", "SWEEP"]

# Indexes are sorted sets under the namespace and "ix:" (apart from the keys, which
# `keys` lists), one score a member (the lowest given); the sums of scores of those
# whose name starts with "#" are in one hash, "ix", by index name (their sizes are
# ZCARD). The scripts below take, after their own KEYS, those of the index entries they
# add (ARGV: score, member and name for each) and then of those they remove (ARGV:
# member and name).
_UNINDEX = """
local function unindex(key, name, member, totals)
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
"""
_INDEXING = (
    _UNINDEX
    + """
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
    unindex(KEYS[first + i], ARGV[at + 2 * i + 1], ARGV[at + 2 * i], totals)
  end
end
"""
)

# Writes the payload unless present, then the record unless present, each with its index
# entries, in one step that nothing else on the server interleaves with. It refuses (-1)
# while a reindex holds the exclusive lock. KEYS: blob, record, lock, totals, then the
# entries' indexes; ARGV: payload, value, number of record entries, of blob entries,
# then the entries.
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

# Appends to a list and adds index entries; refuses (-1) while a reindex holds the lock,
# and does nothing (0) when ARGV[2] is "1" and KEYS[4] (the record) is gone, so that no
# sighting lands on a record gc has removed. KEYS: list, lock, totals, the key required
# (or the list again), indexes.
APPEND = (
    _INDEXING
    + """
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
if ARGV[2] == '1' and redis.call('EXISTS', KEYS[4]) == 0 then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
add(5, #KEYS - 4, 3, KEYS[3])
return 1
"""
)

# A batch of gc's removals, in one step (what `store.kv.sweep` does on the other
# backends). ARGV: the namespace, the tombstone (none if empty), "1" if ids are indexed,
# the number of records, then for each: its id, its later sightings when gc read it, its
# ended pin then (empty: none), the number of other keys and those keys, the number of
# index entries and (name, member) for each, the number of (index, registry, member)
# triples and those (the member leaves the registry once the index is empty); then the
# number of payload addresses and those. A record that is gone, has a pin other than
# the ended one gc read, or was seen again since is kept. Then a payload that no record
# is indexed under any more goes, with its token count and its entry in #blobs. Gives
# back the ids removed and, for each payload removed, its address and size. Keys are
# named from the namespace here: a batch names too many, of too many kinds, to pass
# them apart.
SWEEP = (
    _UNINDEX
    + """
local ns, tomb, ids = ARGV[1], ARGV[2], ARGV[3] == '1'
local area, totals = ns .. 'ix:', ns .. 'ix'
local function drop(name, member) unindex(area .. name, name, member, totals) end
local i, gone, freed = 5, {}, {}
for _ = 1, tonumber(ARGV[4]) do
  local id, seen, pin = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  local record, pinned = ns .. 'r:' .. id, ns .. 'p:' .. id
  local held = redis.call('GET', pinned)
  local keep = redis.call('EXISTS', record) == 0 or (held and held ~= pin)
    or redis.call('LLEN', ns .. 'o:' .. id) ~= seen
  i = i + 3
  local nk = tonumber(ARGV[i])
  if not keep then
    redis.call('DEL', record, pinned)
    for j = 1, nk do redis.call('DEL', ns .. ARGV[i + j]) end
    if tomb ~= '' then
      redis.call('SET', ns .. 'x:' .. id, tomb)
      if ids then redis.call('ZADD', area .. 'tombs', 0, id) end
    end
  end
  i = i + nk + 1
  local ne = tonumber(ARGV[i])
  if not keep then
    for j = 0, ne - 1 do drop(ARGV[i + 1 + 2 * j], ARGV[i + 2 + 2 * j]) end
  end
  i = i + 2 * ne + 1
  local nr = tonumber(ARGV[i])
  if not keep then
    for j = 0, nr - 1 do
      local at = i + 1 + 3 * j
      if redis.call('EXISTS', area .. ARGV[at]) == 0 then drop(ARGV[at + 1], ARGV[at + 2]) end
    end
    gone[#gone + 1] = id
  end
  i = i + 3 * nr + 1
end
for j = 1, tonumber(ARGV[i]) do
  local address = ARGV[i + j]
  if redis.call('EXISTS', area .. 'payload:' .. address) == 0 then
    local blob = ns .. 'b:' .. address
    local size = redis.call('STRLEN', blob)
    if redis.call('DEL', blob) == 1 then
      freed[#freed + 1] = address
      freed[#freed + 1] = size
    end
    redis.call('DEL', ns .. 't:' .. address)
    drop('#blobs', address)
  end
end
return {gone, freed}
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
