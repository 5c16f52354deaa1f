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
    OUT version text)
RETURNS record
AS 'MODULE_PATHNAME', 'walpilot_status_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walpilot.status AS
    SELECT * FROM walpilot.status_data();

COMMENT ON VIEW walpilot.status IS
    'walpilot worker state: mode in force, worker process, loop passes, reset time';

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
