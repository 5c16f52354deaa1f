--
-- storage: walpilot.probe(), walpilot.storage and walpilot.checkpoints
--
\d walpilot.storage
\d walpilot.checkpoints
SELECT pg_get_function_arguments('walpilot.probe'::regproc) AS probe_args,
       pg_get_function_result('walpilot.probe'::regproc) AS probe_result;
-- before any probe: one flush_estimate row, no probe rows
SELECT kind, count(*) FROM walpilot.storage WHERE kind <> 'sleep'
 GROUP BY kind ORDER BY kind;
-- argument errors
SELECT * FROM walpilot.probe(-1);
SELECT * FROM walpilot.probe(0);
SELECT * FROM walpilot.probe('nan');
SELECT * FROM walpilot.probe(601);
SELECT * FROM walpilot.probe(1, ARRAY['fsync', 'o_direct']);
SELECT * FROM walpilot.probe(1, ARRAY[NULL]::text[]);
SELECT * FROM walpilot.probe(1, ARRAY[]::text[]);
-- pg_regress starts its server with -F (fsync = off): the probe reports
-- every method as not measured instead of flushing (TAP tests probe for real)
SHOW fsync;
SELECT method, writes, op_us_p50 > 0 AS measured,
       op_us_p99 >= op_us_p50 AS p99_ge_p50, ops_per_sec > 0 AS rate,
       wal_dir LIKE '%/pg_wal' AS in_wal_dir, note
  FROM walpilot.probe(0.5);
-- one method by name
SELECT method, writes, op_us_mean > 0 AS measured
  FROM walpilot.probe(0.1, ARRAY['fdatasync']);
-- the probe file is gone
SELECT count(*) AS leftover FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%';
-- the view keeps the last probe and the sleep overshoot of probe()
SELECT kind, method, writes, samples > 0 AS sampled, us_p50 > 0 AS measured
  FROM walpilot.storage WHERE kind = 'probe';
SELECT requested_us, samples, us_p50 > -requested_us AS sane,
       us_p99 >= us_p50 AS p99_ge_p50
  FROM walpilot.storage WHERE kind = 'sleep' ORDER BY requested_us;
SELECT kind, method IS NOT NULL AS has_source, note
  FROM walpilot.storage WHERE kind = 'flush_estimate';
-- a requested checkpoint with writes before it: a complete record
CREATE TABLE wp_storage_t AS SELECT g AS id, repeat('x', 100) AS pad
  FROM generate_series(1, 5000) g;
CHECKPOINT;
SELECT reason, buffers_written > 0 AS wrote, write_ms >= 0 AS write_ok,
       sync_ms >= 0 AS sync_ok, finished_at >= started_at AS ordered,
       wal_bytes > 0 AS wal_ok, flush_after_kb >= 0 AS flush_after_ok,
       commits IS NULL AS commits_unknown, stall_seconds IS NULL AS stall_unknown
  FROM walpilot.checkpoints ORDER BY started_at DESC LIMIT 1;
DROP TABLE wp_storage_t;
-- privileges: monitors read the views but cannot probe
CREATE ROLE regress_wp_storage_monitor LOGIN IN ROLE pg_monitor;
SET ROLE regress_wp_storage_monitor;
SELECT count(*) > 0 AS readable FROM walpilot.storage;
SELECT count(*) >= 0 AS readable FROM walpilot.checkpoints;
SELECT * FROM walpilot.probe(0.1);
RESET ROLE;
DROP ROLE regress_wp_storage_monitor;
-- walpilot.probe_interval: 0 (off) or at least 10 s
ALTER SYSTEM SET walpilot.probe_interval = 5;
ALTER SYSTEM SET walpilot.probe_interval = '1min';
ALTER SYSTEM RESET walpilot.probe_interval;
-- without pg_monitor nothing is readable
CREATE ROLE regress_wp_storage_plain LOGIN;
SET ROLE regress_wp_storage_plain;
SELECT count(*) FROM walpilot.storage;
SELECT count(*) FROM walpilot.checkpoints;
SELECT * FROM walpilot.storage_data();
RESET ROLE;
DROP ROLE regress_wp_storage_plain;
