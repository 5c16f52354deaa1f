--
-- guc_units: out-of-range values of settings with a unit are rejected.
-- The server's message names the unit in the range in 17 and 18
-- (guc_units_1.out), not in 15 (guc_units.out).
--
ALTER SYSTEM SET walpilot.sample_interval = 0;
ALTER SYSTEM SET walpilot.sample_interval = 1001;
ALTER SYSTEM SET walpilot.sample_interval = '5s';
ALTER SYSTEM SET walpilot.history_size = 10;
ALTER SYSTEM SET walpilot.tune_interval = 5;
ALTER SYSTEM SET walpilot.probe_interval = -1;
