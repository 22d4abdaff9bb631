"""The SQL of the disk store: its tables, beside diskcache's own, and the statements it runs.

The indexes live in tables of their own in diskcache's SQLite database, written on its
connection inside its transactions: an index entry commits with what it indexes. One
table holds every pair, clustered by (name, score, member), so that the entries of a
write land on few pages; triggers keep the size of each "#" index.

Records have a table of their own, one row a record: its id, what it is found by (the
`Row`: time, tool, key, session, payload address), its stored JSON, and its payload when
that is small and not stored already (a later record with the same payload points at
that copy: payloads are still stored once). SQLite's own indexes on the columns serve
`#time`, `#tool:`, `key:` and `session:`, and triggers keep their sizes, the tool and
session registries and the count of payloads: a write is one row in one statement.
Large payloads go to diskcache (a file each), under their address. A record's later
sightings are rows of a table of their own: adding one writes one row, however many
there are.
"""

from __future__ import annotations

import diskcache

# The diskcache rows that hold a token count (`_keys.TOKENS`), as a trigger's condition.
_TOKENS = "{row}.key >= 't:' AND {row}.key < 't;' AND {row}.raw = 1"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS addressable_index (
        name TEXT NOT NULL, score INTEGER NOT NULL, member TEXT NOT NULL,
        PRIMARY KEY (name, score, member)) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS addressable_index_size (
        name TEXT PRIMARY KEY, members INTEGER NOT NULL, total INTEGER NOT NULL) WITHOUT ROWID""",
    """CREATE TRIGGER IF NOT EXISTS addressable_index_added AFTER INSERT ON addressable_index
    WHEN substr(new.name, 1, 1) = '#'
    BEGIN
        INSERT INTO addressable_index_size VALUES (new.name, 1, new.score)
        ON CONFLICT (name) DO UPDATE SET members = members + 1, total = total + new.score;
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_index_removed AFTER DELETE ON addressable_index
    WHEN substr(old.name, 1, 1) = '#'
    BEGIN
        UPDATE addressable_index_size SET members = members - 1, total = total - old.score
        WHERE name = old.name;
    END""",
    """CREATE TABLE IF NOT EXISTS addressable_records (
        id TEXT PRIMARY KEY, at INTEGER NOT NULL, tool TEXT NOT NULL, key TEXT, session TEXT,
        address TEXT NOT NULL, value BLOB NOT NULL, payload BLOB, tokens BLOB)""",
    "CREATE INDEX IF NOT EXISTS addressable_records_at ON addressable_records (at, id)",
    "CREATE INDEX IF NOT EXISTS addressable_records_tool ON addressable_records (tool, at, id)",
    """CREATE INDEX IF NOT EXISTS addressable_records_key ON addressable_records (key, at, id)
    WHERE key IS NOT NULL""",
    """CREATE INDEX IF NOT EXISTS addressable_records_session
    ON addressable_records (session, at, id) WHERE session IS NOT NULL""",
    "CREATE INDEX IF NOT EXISTS addressable_records_address ON addressable_records (address)",
    # Later sightings of a record, one row each, in the order they were added.
    "CREATE TABLE IF NOT EXISTS addressable_sightings (id TEXT NOT NULL, item BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS addressable_sightings_id ON addressable_sightings (id)",
    # Records, payloads kept in rows and their bytes, by tool: one upsert a write.
    """CREATE TABLE IF NOT EXISTS addressable_counts (
        tool TEXT PRIMARY KEY, records INTEGER NOT NULL, payloads INTEGER NOT NULL,
        bytes INTEGER NOT NULL) WITHOUT ROWID""",
    # Two triggers, not one with both statements, and `ifnull`, not `coalesce`: each
    # of those makes SQLite copy the new payload into the trigger, on every write.
    """CREATE TRIGGER IF NOT EXISTS addressable_record_counted
    AFTER INSERT ON addressable_records
    BEGIN
        INSERT INTO addressable_counts
        VALUES (new.tool, 1, new.payload IS NOT NULL, ifnull(length(new.payload), 0))
        ON CONFLICT (tool) DO UPDATE SET records = records + 1,
            payloads = payloads + excluded.payloads, bytes = bytes + excluded.bytes;
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_session_seen AFTER INSERT ON addressable_records
    WHEN new.session IS NOT NULL
    BEGIN
        INSERT OR IGNORE INTO addressable_index VALUES ('#sessions', 0, new.session);
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_record_removed
    AFTER DELETE ON addressable_records
    BEGIN
        UPDATE addressable_counts SET records = records - 1,
            payloads = payloads - (old.payload IS NOT NULL),
            bytes = bytes - coalesce(length(old.payload), 0)
        WHERE tool = old.tool;
    END""",
    """CREATE TRIGGER IF NOT EXISTS addressable_record_moved
    AFTER UPDATE OF payload ON addressable_records
    BEGIN
        UPDATE addressable_counts
        SET payloads = payloads + (new.payload IS NOT NULL) - (old.payload IS NOT NULL),
            bytes = bytes + coalesce(length(new.payload), 0) - coalesce(length(old.payload), 0)
        WHERE tool = new.tool;
    END""",
    # A payload's token count is a diskcache value (`t:` and its address); each row
    # with that payload keeps a copy, so that a replay reads it with the row. These keep
    # the copies right when the value is written or removed; a new row copies it as it
    # is inserted (see `_COUNT`).
    f"""CREATE TRIGGER IF NOT EXISTS addressable_tokens_added AFTER INSERT ON Cache
    WHEN {_TOKENS.format(row="new")}
    BEGIN
        UPDATE addressable_records SET tokens = new.value WHERE address = substr(new.key, 3);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS addressable_tokens_changed AFTER UPDATE OF value ON Cache
    WHEN {_TOKENS.format(row="new")}
    BEGIN
        UPDATE addressable_records SET tokens = new.value WHERE address = substr(new.key, 3);
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS addressable_tokens_removed AFTER DELETE ON Cache
    WHEN {_TOKENS.format(row="old")}
    BEGIN
        UPDATE addressable_records SET tokens = X'' WHERE address = substr(old.key, 3);
    END""",
)
ADD = "INSERT OR IGNORE INTO addressable_index (name, score, member) VALUES (?, ?, ?)"
REMOVE = "DELETE FROM addressable_index WHERE name = ? AND score = ? AND member = ?"
# A record, with its payload unless a copy is stored already (in a record's row, or in
# diskcache under its address, ?9). VALUES, not INSERT ... SELECT: a SELECT that reads
# the table it inserts into is run into a temporary table first, the payload copied
# with the row.
# Each insert copies the payload's token count from its diskcache value, or says there
# is none (an empty blob).
_COUNT = "ifnull((SELECT value FROM Cache WHERE key = 't:' || ?6 AND raw = 1), X'')"
PUT = (
    "INSERT OR IGNORE INTO addressable_records "
    "(id, at, tool, key, session, address, value, payload, tokens) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, CASE WHEN "
    "EXISTS (SELECT 1 FROM addressable_records WHERE address = ?6 AND payload IS NOT NULL) "
    f"OR EXISTS (SELECT 1 FROM Cache WHERE key = ?9 AND raw = 1) THEN NULL ELSE ?8 END, {_COUNT})"
)
PUT_ROW = (
    "INSERT OR IGNORE INTO addressable_records "
    "(id, at, tool, key, session, address, value, tokens) "
    f"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {_COUNT})"
)
# A record's row again, for a value set by hand: its payload and address as they were.
SET_ROW = (
    "INSERT INTO addressable_records "
    "(id, at, tool, key, session, address, value, payload, tokens) "
    f"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {_COUNT})"
)
# The payload of a record whose row holds none: another row's copy.
COPY = "SELECT payload FROM addressable_records WHERE address = ? AND payload IS NOT NULL LIMIT 1"
# A record with its payload (from its row, another row, or a diskcache row; not a file)
# and its token count (the row's copy), in one statement.
# The copies of the payload are looked for only when the row has none (`coalesce`
# runs a subquery only when the values before it are NULL; a join would run always).
JOINED = (
    # A value edited by hand with SQL's text functions is TEXT: read as its bytes.
    "SELECT CAST(r.value AS BLOB), CAST(coalesce(r.payload, (SELECT c.payload "
    "FROM addressable_records AS c WHERE c.address = r.address AND c.payload IS NOT NULL "
    "LIMIT 1), "
    "(SELECT b.value FROM Cache AS b WHERE b.key = 'b:' || r.address AND b.raw = 1 "
    f"AND b.mode = {diskcache.core.MODE_RAW} AND b.filename IS NULL)) AS BLOB), "
    "nullif(r.tokens, X'') "
    "FROM addressable_records AS r WHERE r.id = ?"
)
# The counts the record triggers keep, and the session registry, from the rows again
# (after `drop_indexes`).
RECOUNT = (
    "DELETE FROM addressable_counts",
    """INSERT INTO addressable_counts SELECT tool, count(*), count(payload),
    coalesce(sum(length(payload)), 0) FROM addressable_records GROUP BY tool""",
    "INSERT OR IGNORE INTO addressable_index SELECT DISTINCT '#sessions', 0, session "
    "FROM addressable_records WHERE session IS NOT NULL",
)
TOP = "\U0010ffff"  # above every character: (prefix, prefix + TOP) is a key range
ADD_SIGHTING = "INSERT INTO addressable_sightings (id, item) VALUES (?, ?)"
