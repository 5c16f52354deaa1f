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
-- bad values are rejected, never clamped to the range
ALTER SYSTEM SET walpilot.mode = 'autopilot';
ALTER SYSTEM SET walpilot.commit_delay_max = -1;
ALTER SYSTEM SET walpilot.commit_delay_max = 100001;
ALTER SYSTEM SET walpilot.max_latency_regression = 'ten';
ALTER SYSTEM SET walpilot.tune_commit_delay = 'maybe';
-- good values are accepted (and put back)
ALTER SYSTEM SET walpilot.sample_interval = '20ms';
ALTER SYSTEM RESET walpilot.sample_interval;
-- unit rounding: an integer setting rounds a value to its unit (a check
-- hook sees only the rounded integer, so it cannot reject it): '500ms'
-- for walpilot.probe_interval (unit s) is 0, which turns periodic probing
-- off, and 1.5 for walpilot.commit_delay_max (us) is 2.
ALTER SYSTEM SET walpilot.probe_interval = '500ms';
ALTER SYSTEM SET walpilot.commit_delay_max = 1.5;
SELECT pg_reload_conf();
SELECT pg_sleep(1);
SHOW walpilot.probe_interval;
SHOW walpilot.commit_delay_max;
-- '5500ms' rounds to 6 s, below the 10 s minimum: rejected
ALTER SYSTEM SET walpilot.probe_interval = '5500ms';
ALTER SYSTEM RESET walpilot.probe_interval;
ALTER SYSTEM RESET walpilot.commit_delay_max;
SELECT pg_reload_conf();
SELECT pg_sleep(1);
SHOW walpilot.probe_interval;
SHOW walpilot.commit_delay_max;
-- configuration lines not in force are listed (none here)
SELECT * FROM walpilot.setting_errors;
