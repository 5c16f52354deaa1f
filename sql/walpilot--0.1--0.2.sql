/* walpilot--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walpilot UPDATE TO '0.2'" to load this file. \quit

-- A fresh CREATE EXTENSION runs walpilot--0.1.sql and then this script, so
-- an upgraded database and a new one have the same objects by construction.
-- Objects new in 0.2 are created here; a view whose columns change is
-- dropped and created again (CREATE OR REPLACE VIEW can only append).

--
-- recommendations: settings walpilot does not tune, from what it measured
--
CREATE FUNCTION walpilot.recommendations_data(
    OUT setting text,
    OUT current_value text,
    OUT recommended_value text,
    OUT requires_restart boolean,
    OUT confidence double precision,
    OUT evidence jsonb,
    OUT apply_sql text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_recommendations_data'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION walpilot.recommendations_data() IS
    'the function behind walpilot.recommendations';

CREATE VIEW walpilot.recommendations AS
    SELECT * FROM walpilot.recommendations_data();

COMMENT ON VIEW walpilot.recommendations IS
    'settings to change, each from walpilot''s measurements (evidence), with a confidence in [0, 1] and the SQL that applies it; a row disappears when its evidence does';

REVOKE ALL ON FUNCTION walpilot.recommendations_data() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.recommendations_data() TO pg_monitor;
REVOKE ALL ON walpilot.recommendations FROM PUBLIC;
GRANT SELECT ON walpilot.recommendations TO pg_monitor;
