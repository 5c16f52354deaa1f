/* walpilot--0.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION walpilot" to load this file. \quit

-- The schema belongs to the extension: DROP EXTENSION removes it.
CREATE SCHEMA walpilot;
REVOKE ALL ON SCHEMA walpilot FROM PUBLIC;
GRANT USAGE ON SCHEMA walpilot TO pg_monitor;

--
-- status
--
CREATE FUNCTION walpilot.status_data(
    OUT mode text,
    OUT worker_pid integer,
    OUT worker_started_at timestamptz,
    OUT worker_starts bigint,
    OUT sample_interval_ms integer,
    OUT ticks bigint,
    OUT stats_reset_at timestamptz,
    OUT version text,
    OUT samples_taken bigint,
    OUT missed_ticks bigint,
    OUT commits_timed bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'walpilot_status_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.status AS
    SELECT * FROM walpilot.status_data();

COMMENT ON VIEW walpilot.status IS
    'walpilot worker state: mode in force, worker process, loop passes, reset time';

--
-- wait_profile: sampled wait events of every process, cumulative
--
CREATE FUNCTION walpilot.wait_profile_data(
    OUT backend_type text,
    OUT wait_event_type text,
    OUT wait_event text,
    OUT samples bigint,
    OUT seconds double precision,
    OUT pct_of_active double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_wait_profile_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.wait_profile_data() IS
    'the function behind walpilot.wait_profile';

CREATE VIEW walpilot.wait_profile AS
    SELECT * FROM walpilot.wait_profile_data();

COMMENT ON VIEW walpilot.wait_profile IS
    'samples per backend type and wait event since reset; CPU = active with no wait event; idle waits (Activity, Client) have no pct_of_active';

--
-- commit_latency: durable-commit latency histogram, cumulative
--
CREATE FUNCTION walpilot.commit_latency_data(
    OUT bucket_lower_us bigint,
    OUT bucket_upper_us bigint,
    OUT commits bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_commit_latency_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.commit_latency_data() IS
    'the function behind walpilot.commit_latency';

CREATE VIEW walpilot.commit_latency AS
    SELECT * FROM walpilot.commit_latency_data();

COMMENT ON VIEW walpilot.commit_latency IS
    'durable commits since reset per latency bucket [bucket_lower_us, bucket_upper_us); commit record insert to flush return';

--
-- timeline: one row per second, oldest first
--
CREATE FUNCTION walpilot.timeline_data(
    OUT ts timestamptz,
    OUT samples integer,
    OUT missed_ticks integer,
    OUT active_backends double precision,
    OUT cpu_backends double precision,
    OUT commits bigint,
    OUT async_commits bigint,
    OUT commit_p50_us bigint,
    OUT commit_p95_us bigint,
    OUT commit_p99_us bigint,
    OUT commit_max_us bigint,
    OUT wal_write_lock_waiters double precision,
    OUT wal_insert_lock_waiters double precision,
    OUT wal_sync_waiters double precision,
    OUT wal_write_waiters double precision,
    OUT commit_delay_sleepers double precision,
    OUT wal_flushes bigint,
    OUT commits_per_flush double precision,
    OUT wal_bytes bigint,
    OUT wal_records bigint,
    OUT wal_fpi bigint,
    OUT wal_buffers_full bigint,
    OUT wal_writes bigint,
    OUT wal_syncs bigint,
    OUT wal_write_time_us bigint,
    OUT wal_sync_time_us bigint,
    OUT checkpointer_busy double precision,
    OUT checkpoint_started boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_timeline_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.timeline_data() IS
    'the function behind walpilot.timeline';

CREATE VIEW walpilot.timeline AS
    SELECT * FROM walpilot.timeline_data();

COMMENT ON VIEW walpilot.timeline IS
    'one row per second of the last walpilot.history_size seconds, oldest first: activity, commits and their latency, WAL waiters (averages over the second''s samples), WAL counters';

--
-- actions (superuser only)
--
CREATE FUNCTION walpilot.reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'walpilot_reset'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION walpilot.reset() IS
    'clear every measurement walpilot keeps; returns the reset time';

--
-- privileges: readers for pg_monitor, actions for superusers only
--
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA walpilot FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA walpilot FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.status_data() TO pg_monitor;
GRANT SELECT ON walpilot.status TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.wait_profile_data() TO pg_monitor;
GRANT SELECT ON walpilot.wait_profile TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.commit_latency_data() TO pg_monitor;
GRANT SELECT ON walpilot.commit_latency TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.timeline_data() TO pg_monitor;
GRANT SELECT ON walpilot.timeline TO pg_monitor;
