--
-- badinput: every SQL function and every walpilot.* setting with NULL,
-- negative, huge, NaN and nonsense values gets a clear error (or a
-- documented default), never a crash or a silent clamp
--
-- Only rows that do not depend on the disk are shown: fsync_writethrough
-- does not exist on Linux, so probing it measures nothing and says why.
\set quiet_probe 'SELECT method, writes, op_us_mean, note FROM'

-- probe(seconds): NULL means the default (2 s) ...
:quiet_probe walpilot.probe(NULL, ARRAY['fsync_writethrough']);
-- ... zero, negative, NaN, infinities and huge values are refused
SELECT * FROM walpilot.probe(0);
SELECT * FROM walpilot.probe(-1);
SELECT * FROM walpilot.probe(-0.0);
SELECT * FROM walpilot.probe('NaN');
SELECT * FROM walpilot.probe('Infinity');
SELECT * FROM walpilot.probe('-Infinity');
SELECT * FROM walpilot.probe(600.000001);
SELECT * FROM walpilot.probe(1e308);
SELECT * FROM walpilot.probe(-1e308);
-- a tiny positive duration is accepted
:quiet_probe walpilot.probe(1e-300, ARRAY['fsync_writethrough']);
-- nonsense types
SELECT * FROM walpilot.probe('two seconds');
SELECT * FROM walpilot.probe('');
SELECT * FROM walpilot.probe(2, 'fsync');
SELECT * FROM walpilot.probe(2, '{fsync');

-- probe(methods): NULL elements, empty, unknown, wrong case, long names
SELECT * FROM walpilot.probe(0.1, ARRAY[NULL]::text[]);
SELECT * FROM walpilot.probe(0.1, ARRAY['fsync_writethrough', NULL]);
SELECT * FROM walpilot.probe(0.1, ARRAY[]::text[]);
SELECT * FROM walpilot.probe(0.1, '{}');
SELECT * FROM walpilot.probe(0.1, ARRAY['bogus']);
SELECT * FROM walpilot.probe(0.1, ARRAY['FSYNC']);
SELECT * FROM walpilot.probe(0.1, ARRAY[' fsync']);
SELECT * FROM walpilot.probe(0.1, ARRAY[''']; DROP TABLE x; --']);
SELECT * FROM walpilot.probe(0.1, ARRAY[repeat('x', 100)]);
SELECT * FROM walpilot.probe(0.1, ARRAY[E'fsync\u00e9']);
-- duplicates and a two-dimensional array are one selection
:quiet_probe walpilot.probe(0.1, ARRAY['fsync_writethrough', 'fsync_writethrough']);
:quiet_probe walpilot.probe(0.1, '{{fsync_writethrough},{fsync_writethrough}}');
-- named arguments: wrong names and too many arguments
SELECT * FROM walpilot.probe(secs => 1);
SELECT * FROM walpilot.probe(1, NULL, 3);

-- the argument-less functions refuse arguments
SELECT walpilot.reset(1);
SELECT walpilot.revert(NULL);
SELECT * FROM walpilot.status_data_0_2(NULL);
SELECT * FROM walpilot.storage_data('x');
SELECT * FROM walpilot.checkpoints_data(-1);
SELECT * FROM walpilot.wait_profile_data('NaN'::float8);
SELECT * FROM walpilot.commit_latency_data(1e308);
SELECT * FROM walpilot.timeline_data_0_2(0);
SELECT * FROM walpilot.commit_groups_data(0);
SELECT * FROM walpilot.decisions_data(NULL::int);
SELECT * FROM walpilot.settings_data('commit_delay');
-- ... and still work without them, also twice in one statement
SELECT walpilot.reset() <= now() + interval '1 s' AS reset_ok,
       walpilot.reset() IS NOT NULL AS reset_again;
SELECT walpilot.revert();
SELECT count(*) > 0 AS rows FROM walpilot.settings_data();

-- settings: every walpilot.* GUC with NULL-like, negative, huge, NaN and
-- nonsense values; each one is a clear error naming the parameter
ALTER SYSTEM SET walpilot.mode = '';
ALTER SYSTEM SET walpilot.mode = 'OBSERVE ';
ALTER SYSTEM SET walpilot.mode = -1;
ALTER SYSTEM SET walpilot.mode = 'NaN';
ALTER SYSTEM SET walpilot.sample_interval = '';
ALTER SYSTEM SET walpilot.sample_interval = -1;
ALTER SYSTEM SET walpilot.sample_interval = 'NaN';
ALTER SYSTEM SET walpilot.sample_interval = 'Infinity';
ALTER SYSTEM SET walpilot.sample_interval = 99999999999;
ALTER SYSTEM SET walpilot.sample_interval = '10 parsecs';
ALTER SYSTEM SET walpilot.history_size = -1;
ALTER SYSTEM SET walpilot.history_size = 'NaN';
ALTER SYSTEM SET walpilot.history_size = '2d';
ALTER SYSTEM SET walpilot.history_size = 9999999999999;
ALTER SYSTEM SET walpilot.tune_commit_delay = '';
ALTER SYSTEM SET walpilot.tune_commit_delay = -1;
ALTER SYSTEM SET walpilot.tune_commit_delay = 'NaN';
ALTER SYSTEM SET walpilot.commit_delay_max = 'NaN';
ALTER SYSTEM SET walpilot.commit_delay_max = 1e100;
ALTER SYSTEM SET walpilot.commit_delay_max = '10ms';
ALTER SYSTEM SET walpilot.max_latency_regression = -1;
ALTER SYSTEM SET walpilot.max_latency_regression = 1001;
ALTER SYSTEM SET walpilot.max_latency_regression = 'NaN';
ALTER SYSTEM SET walpilot.tune_interval = -1;
ALTER SYSTEM SET walpilot.tune_interval = '2d';
ALTER SYSTEM SET walpilot.tune_interval = 'NaN';
ALTER SYSTEM SET walpilot.probe_interval = -1;
ALTER SYSTEM SET walpilot.probe_interval = 9;
ALTER SYSTEM SET walpilot.probe_interval = 'NaN';
ALTER SYSTEM SET walpilot.probe_interval = '2 fortnights';
ALTER SYSTEM SET walpilot.tune_checkpoint_flush = 'maybe';
ALTER SYSTEM SET walpilot.checkpoint_flush_after_min = -1;
ALTER SYSTEM SET walpilot.checkpoint_flush_after_max = '3MB';
ALTER SYSTEM SET walpilot.checkpoint_flush_after_max = 'NaN';
-- none of it reached postgresql.auto.conf
SELECT count(*) AS walpilot_lines
  FROM pg_file_settings WHERE name LIKE 'walpilot.%' AND sourcefile LIKE '%auto.conf';
-- a session cannot change any of them either
SET walpilot.mode = 'off';
SET walpilot.history_size = 60;
SET walpilot.checkpoint_flush_after_max = '1MB';
SET walpilot.commit_delay_max = 0;
SET walpilot.probe_interval = 0;
SET walpilot.nonexistent = 1;
