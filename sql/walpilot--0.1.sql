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
