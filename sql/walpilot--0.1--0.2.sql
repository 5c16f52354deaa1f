/* walpilot--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walpilot UPDATE TO '0.2'" to load this file. \quit

-- A fresh CREATE EXTENSION runs walpilot--0.1.sql and then this script, so
-- an upgraded database and a new one have the same objects by construction.
-- Objects new in 0.2 are created here; a view whose columns change is
-- dropped and created again (CREATE OR REPLACE VIEW can only append).

-- setting errors
-- walpilot.* lines of the configuration files that are not in force: a bad
-- value at server start leaves the built-in default (with a WARNING in the
-- log), a bad value at reload the previous one.  pg_file_settings is
-- superuser-only: a security-definer function shows walpilot's lines only.
CREATE FUNCTION walpilot.setting_errors_data(
    OUT sourcefile text,
    OUT sourceline integer,
    OUT name text,
    OUT file_value text,
    OUT error text)
RETURNS SETOF record
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT f.sourcefile, f.sourceline, f.name, f.setting, f.error
      FROM pg_catalog.pg_file_settings f
     WHERE f.name LIKE 'walpilot.%' AND f.error IS NOT NULL
     ORDER BY f.sourcefile, f.sourceline
$$;

CREATE VIEW walpilot.setting_errors AS
    SELECT e.sourcefile, e.sourceline, e.name, e.file_value,
           s.setting AS value_in_force, s.source AS source_in_force, e.error
      FROM walpilot.setting_errors_data() e
      LEFT JOIN pg_catalog.pg_settings s ON s.name = e.name;

REVOKE ALL ON FUNCTION walpilot.setting_errors_data() FROM PUBLIC;
REVOKE ALL ON walpilot.setting_errors FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.setting_errors_data() TO pg_monitor;
GRANT SELECT ON walpilot.setting_errors TO pg_monitor;
