/* walpilot--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walpilot UPDATE TO '0.2'" to load this file. \quit

-- A fresh CREATE EXTENSION runs walpilot--0.1.sql and then this script, so
-- an upgraded database and a new one have the same objects by construction.
-- Objects new in 0.2 are created here; a view whose columns change is
-- dropped and created again (CREATE OR REPLACE VIEW can only append).

--
-- status: pilot_reason (why the pilot is idle or holding) and the gather
-- wake-up counters
--
DROP VIEW walpilot.status;
DROP FUNCTION walpilot.status_data();

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
    OUT pilot_candidate text,
    OUT pilot_reason text,
    OUT gather_wakeups bigint,
    OUT gather_wakeups_misdirected bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'walpilot_status_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.status AS
    SELECT * FROM walpilot.status_data();

COMMENT ON VIEW walpilot.status IS
    'walpilot worker state: mode in force, worker process, loop passes, reset time, what the pilot does and why';

REVOKE ALL ON FUNCTION walpilot.status_data() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.status_data() TO pg_monitor;
GRANT SELECT ON walpilot.status TO pg_monitor;
