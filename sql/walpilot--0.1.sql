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
    OUT commits_timed bigint,
    OUT pilot_state text,
    OUT pilot_setting text,
    OUT pilot_candidate text)
RETURNS record
AS 'MODULE_PATHNAME', 'walpilot_status_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.status AS
    SELECT * FROM walpilot.status_data();

COMMENT ON VIEW walpilot.status IS
    'walpilot worker state: mode in force, worker process, loop passes, reset time';

--
-- decisions: every trial, change and revert of the pilot
--
CREATE FUNCTION walpilot.decisions_data(
    OUT id bigint,
    OUT decided_at timestamptz,
    OUT setting text,
    OUT old_value text,
    OUT new_value text,
    OUT reason text,
    OUT evidence jsonb,
    OUT outcome text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_decisions_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.decisions AS
    SELECT decided_at, setting, old_value, new_value, reason, evidence, outcome
      FROM walpilot.decisions_data()
     ORDER BY id;

COMMENT ON VIEW walpilot.decisions IS
    'the pilot''s decision log: trials, changes and reverts, with evidence and outcome';

--
-- settings: who owns each knob walpilot may manage, in this session
--
CREATE FUNCTION walpilot.settings_data(
    OUT name text,
    OUT configured_value text,
    OUT effective_value text,
    OUT source text,
    OUT managed_by text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_settings_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.settings AS
    SELECT * FROM walpilot.settings_data();

COMMENT ON VIEW walpilot.settings IS
    'configured and effective values of the settings walpilot may manage, and who owns them';

--
-- storage: probe results, sleep overshoot, flush-latency estimate
--
CREATE FUNCTION walpilot.probe(
    seconds float8 DEFAULT 2,
    methods text[] DEFAULT NULL)
RETURNS TABLE(
    method text,
    writes integer,
    op_us_mean float8,
    op_us_p50 float8,
    op_us_p99 float8,
    ops_per_sec float8,
    wal_dir text,
    note text)
AS 'MODULE_PATHNAME', 'walpilot_probe'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION walpilot.probe(float8, text[]) IS
    'measure write+sync of each wal_sync_method (NULL = all) at 1 and 2 XLOG_BLCKSZ writes per sync in the real WAL directory, as the server opens and syncs WAL; then the sleep overshoot';

CREATE FUNCTION walpilot.storage_data(
    OUT kind text,
    OUT method text,
    OUT writes integer,
    OUT requested_us integer,
    OUT samples bigint,
    OUT us_mean float8,
    OUT us_p50 float8,
    OUT us_p99 float8,
    OUT ops_per_sec float8,
    OUT measured_at timestamptz,
    OUT wal_dir text,
    OUT note text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_storage_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.storage AS
    SELECT * FROM walpilot.storage_data();

COMMENT ON VIEW walpilot.storage IS
    'WAL storage: the current flush-latency estimate and its source, the last probe rows, and pg_usleep overshoot per requested delay';

--
-- checkpoints: the last checkpoints with their phases and effect on commits
--
CREATE FUNCTION walpilot.checkpoints_data(
    OUT started_at timestamptz,
    OUT finished_at timestamptz,
    OUT reason text,
    OUT buffers_written bigint,
    OUT write_ms float8,
    OUT sync_ms float8,
    OUT wal_bytes bigint,
    OUT flush_after_kb integer,
    OUT commits bigint,
    OUT commit_p50_us_during float8,
    OUT commit_p99_us_during float8,
    OUT commit_p99_us_outside float8,
    OUT stall_seconds integer)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_checkpoints_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.checkpoints AS
    SELECT * FROM walpilot.checkpoints_data();

COMMENT ON VIEW walpilot.checkpoints IS
    'the last 64 checkpoints: start, end, reason, buffers, write and sync phase times, WAL distance, checkpoint_flush_after, and foreground commits during vs outside';

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
CREATE FUNCTION walpilot.revert()
RETURNS void
AS 'MODULE_PATHNAME', 'walpilot_revert'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION walpilot.revert() IS
    'put back every setting walpilot changed; the pilot waits walpilot.tune_interval before trying again';

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
GRANT EXECUTE ON FUNCTION walpilot.decisions_data() TO pg_monitor;
GRANT SELECT ON walpilot.decisions TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.settings_data() TO pg_monitor;
GRANT SELECT ON walpilot.settings TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.storage_data() TO pg_monitor;
GRANT SELECT ON walpilot.storage TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.checkpoints_data() TO pg_monitor;
GRANT SELECT ON walpilot.checkpoints TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.wait_profile_data() TO pg_monitor;
GRANT SELECT ON walpilot.wait_profile TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.commit_latency_data() TO pg_monitor;
GRANT SELECT ON walpilot.commit_latency TO pg_monitor;
GRANT EXECUTE ON FUNCTION walpilot.timeline_data() TO pg_monitor;
GRANT SELECT ON walpilot.timeline TO pg_monitor;
