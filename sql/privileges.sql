--
-- privileges: readers for pg_monitor, actions for superusers only
--
CREATE ROLE regress_wp_monitor LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_wp_plain LOGIN;
SET ROLE regress_wp_monitor;
SELECT count(*) AS rows FROM walpilot.status;
SELECT walpilot.reset();
SET ROLE regress_wp_plain;
SELECT count(*) FROM walpilot.status;
SELECT walpilot.reset();
SELECT * FROM walpilot.status_data();
-- even with schema usage, the functions themselves are revoked
RESET ROLE;
GRANT USAGE ON SCHEMA walpilot TO regress_wp_plain;
SET ROLE regress_wp_plain;
SELECT count(*) FROM walpilot.status;
SELECT walpilot.reset();
SELECT * FROM walpilot.status_data();
RESET ROLE;
REVOKE USAGE ON SCHEMA walpilot FROM regress_wp_plain;
-- a superuser can act
SELECT walpilot.reset() IS NOT NULL AS reset_ok;
DROP ROLE regress_wp_monitor;
DROP ROLE regress_wp_plain;
