-- Tealeaf relay on PostgreSQL (relay/store-pg.mjs). Applied at every start; idempotent.
-- Times are milliseconds from the relay processes' clocks, so every process and test agrees on them.
CREATE TABLE IF NOT EXISTS relay_rooms (
  id text PRIMARY KEY,
  -- The room's Ed25519 public key; null for pairing mailboxes and for rooms not yet claimed.
  key bytea,
  -- The last position handed out; positions before base were dropped by compaction.
  last bigint NOT NULL DEFAULT 0,
  base bigint NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0,
  messages integer NOT NULL DEFAULT 0,
  created bigint NOT NULL,
  touched bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS relay_rooms_touched ON relay_rooms (touched);
-- The position of the key change's notice that closed the room: no write after it (relay_post,
-- relay_delete refuse 'room-closed'), so a device unpaired cannot erase the notice with its old key.
ALTER TABLE relay_rooms ADD COLUMN IF NOT EXISTS closed bigint;

CREATE TABLE IF NOT EXISTS relay_messages (
  room text NOT NULL REFERENCES relay_rooms (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  size integer NOT NULL,
  body bytea NOT NULL,
  PRIMARY KEY (room, seq)
);

-- Nonces of signed requests, kept twice the clock skew allowed: a replay is refused.
CREATE TABLE IF NOT EXISTS relay_nonces (
  nonce text PRIMARY KEY,
  at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS relay_nonces_at ON relay_nonces (at);

-- Rooms (pairing mailboxes included) created in the last hour, by the address that created each:
-- counted in the transaction that creates a room, so a burst of first posts cannot pass the limit.
CREATE TABLE IF NOT EXISTS relay_births (
  address text NOT NULL,
  at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS relay_births_address ON relay_births (address, at);

-- The post of relays before the count of new rooms moved into it, and before rooms closed.
DROP FUNCTION IF EXISTS relay_post(text, bytea, text, bytea, bigint, boolean, bigint, integer, bigint, bigint);
DROP FUNCTION IF EXISTS relay_post(text, bytea, text, bytea, bigint, text, integer, bigint, integer, bigint, bigint);

-- One post, in one transaction: nonce, claim, new room's count, position, message, compaction,
-- close, quota, notify. A refusal raises (SQLSTATE P0001, the reason as its message), so nothing of it stays.
CREATE OR REPLACE FUNCTION relay_post(
  p_room text, p_key bytea, p_nonce text, p_body bytea, p_compact bigint, p_address text,
  p_rooms_per_hour integer, p_room_bytes bigint, p_pair_messages integer, p_pair_ttl bigint, p_now bigint,
  p_close boolean
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  r relay_rooms%ROWTYPE;
  n integer;
  b bigint;
  pairing boolean := left(p_room, 5) = 'pair-';
BEGIN
  IF p_nonce IS NOT NULL THEN
    INSERT INTO relay_nonces VALUES (p_nonce, p_now) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN RAISE EXCEPTION 'replayed'; END IF;
  END IF;
  IF pairing THEN
    DELETE FROM relay_rooms WHERE id = p_room AND created < p_now - p_pair_ttl;
  END IF;
  SELECT * INTO r FROM relay_rooms WHERE id = p_room FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO relay_rooms (id, key, created, touched) VALUES (p_room, p_key, p_now, p_now)
      ON CONFLICT (id) DO NOTHING;
    IF FOUND THEN
      -- This transaction creates the room: one address's new rooms are counted one transaction at
      -- a time (a lock per address, held to the commit), each seeing the ones committed before it.
      PERFORM pg_advisory_xact_lock(7311032, hashtext(p_address));
      SELECT count(*) INTO n FROM relay_births WHERE address = p_address AND at > p_now - 3600000;
      IF n >= p_rooms_per_hour THEN RAISE EXCEPTION 'too-many-rooms'; END IF;
      INSERT INTO relay_births VALUES (p_address, p_now);
    END IF;
    SELECT * INTO r FROM relay_rooms WHERE id = p_room FOR UPDATE;
  END IF;
  IF NOT pairing THEN
    IF r.key IS NULL THEN
      UPDATE relay_rooms SET key = p_key WHERE id = p_room;
    ELSIF r.key <> p_key THEN
      RAISE EXCEPTION 'not-yours';
    END IF;
    IF r.closed IS NOT NULL THEN RAISE EXCEPTION 'room-closed'; END IF;
  ELSIF r.last >= p_pair_messages THEN
    RAISE EXCEPTION 'mailbox-full';
  END IF;
  IF p_compact IS NOT NULL AND (pairing OR p_compact < 0 OR p_compact > r.last) THEN
    RAISE EXCEPTION 'bad-compact';
  END IF;
  UPDATE relay_rooms
    SET last = last + 1, bytes = bytes + octet_length(p_body), messages = messages + 1, touched = p_now
    WHERE id = p_room RETURNING * INTO r;
  INSERT INTO relay_messages VALUES (p_room, r.last, octet_length(p_body), p_body);
  IF p_close AND NOT pairing THEN
    UPDATE relay_rooms SET closed = r.last WHERE id = p_room RETURNING * INTO r;
  END IF;
  IF p_compact IS NOT NULL AND p_compact > r.base THEN
    WITH gone AS (DELETE FROM relay_messages WHERE room = p_room AND seq <= p_compact RETURNING size)
      SELECT count(*), coalesce(sum(size), 0) INTO n, b FROM gone;
    UPDATE relay_rooms SET base = p_compact, bytes = bytes - b, messages = messages - n
      WHERE id = p_room RETURNING * INTO r;
  END IF;
  IF r.bytes > p_room_bytes THEN RAISE EXCEPTION 'room-full'; END IF;
  PERFORM pg_notify('tealeaf_relay', p_room || ' ' || r.last);
  RETURN r.last;
END $$;

-- A signed delete: the room's own key (or a room not yet claimed) forgets it and its messages; a
-- closed room is kept (its notice is what a device unpaired would erase).
CREATE OR REPLACE FUNCTION relay_delete(p_room text, p_key bytea, p_nonce text, p_now bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  k bytea;
  c bigint;
BEGIN
  INSERT INTO relay_nonces VALUES (p_nonce, p_now) ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN RAISE EXCEPTION 'replayed'; END IF;
  SELECT key, closed INTO k, c FROM relay_rooms WHERE id = p_room FOR UPDATE;
  IF NOT FOUND THEN RETURN false; END IF;
  IF k IS NOT NULL AND k <> p_key THEN RAISE EXCEPTION 'not-yours'; END IF;
  IF c IS NOT NULL THEN RAISE EXCEPTION 'room-closed'; END IF;
  DELETE FROM relay_rooms WHERE id = p_room;
  PERFORM pg_notify('tealeaf_relay', p_room || ' 0');
  RETURN true;
END $$;
