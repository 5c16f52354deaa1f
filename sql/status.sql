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
