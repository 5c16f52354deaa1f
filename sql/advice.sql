--
-- advice: walpilot.recommendations and walpilot.report()
--
\d walpilot.recommendations
SELECT pg_get_function_result('walpilot.report'::regproc) AS report_returns;
-- pg_regress runs with fsync = off and no load: nothing measured calls for
-- a change, so there is no recommendation
SHOW fsync;
SELECT count(*) AS recommendations FROM walpilot.recommendations;
-- the report has every section, says why nothing more can be done, and
-- reads status.pilot_reason only when that column exists
SELECT regexp_replace(line, ' \(.*', '') AS section
  FROM regexp_split_to_table(walpilot.report(), E'\n') AS line
 WHERE line ~ '^[A-Z]';
SELECT walpilot.report() ~ 'fsync = on: with fsync off there is no flush' AS says_fsync_off,
       walpilot.report() ~ 'none: nothing measured calls for a change' AS says_no_advice;
-- privileges: pg_monitor reads both, PUBLIC neither
CREATE ROLE regress_wp_adv_monitor LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_wp_adv_plain LOGIN;
GRANT USAGE ON SCHEMA walpilot TO regress_wp_adv_plain;
SET ROLE regress_wp_adv_monitor;
SELECT count(*) AS rows FROM walpilot.recommendations;
SELECT length(walpilot.report()) > 0 AS report_ok;
SET ROLE regress_wp_adv_plain;
SELECT count(*) FROM walpilot.recommendations;
SELECT walpilot.report();
RESET ROLE;
REVOKE USAGE ON SCHEMA walpilot FROM regress_wp_adv_plain;
DROP ROLE regress_wp_adv_monitor;
DROP ROLE regress_wp_adv_plain;
