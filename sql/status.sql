--
-- status: the column contract and what a fresh server reports
--
\d walpilot.status
SELECT count(*) AS rows FROM walpilot.status;
SELECT mode, sample_interval_ms, version, ticks >= 0 AS ticks_ok,
       worker_starts >= 0 AS starts_ok,
       stats_reset_at <= now() AS reset_in_past
  FROM walpilot.status;
-- reset() moves stats_reset_at forward and returns it
SELECT stats_reset_at AS before_reset FROM walpilot.status \gset
SELECT pg_sleep(0.01);
SELECT walpilot.reset() > :'before_reset'::timestamptz AS reset_moves_forward;
SELECT stats_reset_at > :'before_reset'::timestamptz AS status_shows_reset
  FROM walpilot.status;
-- pilots: one row per pilot, the commit_delay one as walpilot.status shows it
\d walpilot.pilots
SELECT p.pilot, p.state = s.pilot_state AS same_state,
       p.setting = s.pilot_setting AS same_setting,
       p.reason IS NOT DISTINCT FROM s.pilot_reason AS same_reason
  FROM walpilot.pilots p, walpilot.status s
 WHERE p.pilot = 'commit_delay';
SELECT count(*) = count(DISTINCT pilot) AS one_row_per_pilot FROM walpilot.pilots;
-- the model's grade: commit_delay has a model and no trial graded it here
-- (fsync is off); checkpoint_flush_after has none
SELECT pilot, model_trials, predicted_gain, measured_gain, model_error
  FROM walpilot.pilots ORDER BY pilot;
