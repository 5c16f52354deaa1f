--
-- guc: walpilot.* settings, their defaults, units and rejected values
--
SELECT name, setting, unit, context, vartype, min_val, max_val, enumvals
  FROM pg_settings WHERE name LIKE 'walpilot.%' ORDER BY name;
SHOW walpilot.sample_interval;
SHOW walpilot.history_size;
-- SIGHUP and POSTMASTER settings cannot be SET in a session
SET walpilot.mode = 'tune';
SET walpilot.sample_interval = 20;
-- the reserved prefix rejects misspelt names
SET walpilot.sample_intervall = 20;
-- bad values are rejected, never clamped
ALTER SYSTEM SET walpilot.mode = 'autopilot';
ALTER SYSTEM SET walpilot.database = '';
ALTER SYSTEM SET walpilot.commit_delay_max = -1;
ALTER SYSTEM SET walpilot.commit_delay_max = 100001;
ALTER SYSTEM SET walpilot.max_latency_regression = 'ten';
ALTER SYSTEM SET walpilot.tune_commit_delay = 'maybe';
-- good values are accepted (and put back)
ALTER SYSTEM SET walpilot.sample_interval = '20ms';
ALTER SYSTEM RESET walpilot.sample_interval;
