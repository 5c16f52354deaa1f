--
-- instruments: wait_profile, commit_latency, timeline, commit_groups,
-- commit_phases and the status counters — column contracts, reset
-- behaviour, privileges
--
\d walpilot.wait_profile
\d walpilot.commit_latency
\d walpilot.timeline
\d walpilot.commit_groups
\d walpilot.commit_phases
-- commit_groups: the four reasons a commit-led flush closes its group, then
-- the commits that lead none, always in this order
SELECT string_agg(reason, ', ' ORDER BY ordinality) AS reasons
  FROM walpilot.commit_groups_data() WITH ORDINALITY;
-- commit_phases: three phases, always in this order
SELECT string_agg(phase, ', ' ORDER BY ordinality) AS phases
  FROM walpilot.commit_phases_data() WITH ORDINALITY;
-- the histogram has a fixed shape: contiguous buckets from 0 us, the last open
SELECT count(*) AS buckets,
       min(bucket_lower_us) AS lowest,
       count(*) FILTER (WHERE bucket_upper_us IS NULL) AS open_buckets,
       max(bucket_lower_us) AS last_lower_us
  FROM walpilot.commit_latency;
SELECT bool_and(bucket_upper_us = next_lower) AS contiguous
  FROM (SELECT bucket_upper_us,
               lead(bucket_lower_us) OVER (ORDER BY bucket_lower_us) AS next_lower
          FROM walpilot.commit_latency) s
 WHERE next_lower IS NOT NULL;
-- reset clears the profile, the histogram, the timeline and the counters
-- (a second may close between reset and query: allow what one second holds)
SELECT pg_sleep(1.2);
SELECT (SELECT sum(samples) FROM walpilot.wait_profile) > 100 AS profile_filled,
       (SELECT count(*) FROM walpilot.timeline) >= 1 AS timeline_filled;
SELECT walpilot.reset() IS NOT NULL AS reset_ok;
SELECT coalesce(sum(samples), 0) < 100 AS profile_cleared FROM walpilot.wait_profile;
SELECT sum(commits) AS commits FROM walpilot.commit_latency;
SELECT count(*) <= 1 AS timeline_cleared FROM walpilot.timeline;
SELECT commits_timed < 5 AS commits_cleared, missed_ticks < 5 AS missed_cleared
  FROM walpilot.status;
SELECT sum(groups) < 5 AS groups_cleared, sum(commits) < 5 AS group_commits_cleared
  FROM walpilot.commit_groups;
SELECT sum(commits) < 5 AS phases_cleared FROM walpilot.commit_phases;
-- durable commits are timed; read-only and xid-less ones are not
CREATE TABLE wp_instr (a int);
INSERT INTO wp_instr VALUES (1);
INSERT INTO wp_instr VALUES (2);
SELECT count(*) FROM wp_instr;
SELECT commits_timed >= 3 AS durable_counted FROM walpilot.status;
-- each durable commit is in one flushing row (as leader or follower); the
-- groups are the commit-led flushes
SELECT sum(commits) FILTER (WHERE reason NOT IN ('follower', 'non_durable')) =
       (SELECT commits_timed FROM walpilot.status) AS groups_hold_every_commit,
       sum(groups) + sum(commits) FILTER (WHERE reason = 'follower') =
       (SELECT commits_timed FROM walpilot.status) AS leaders_and_followers,
       bool_and(avg_wait_us = 0) FILTER (WHERE reason = 'no_delay' AND groups > 0)
         IS NOT FALSE AS no_delay_waits_nothing
  FROM walpilot.commit_groups;
SELECT sum(commits) >= 3 AS histogram_counted FROM walpilot.commit_latency;
-- every timed commit has a wal_flush part; without a synchronous standby no
-- commit waits for one (zero commits, NULL percentiles, not an error)
SELECT (SELECT commits FROM walpilot.commit_phases WHERE phase = 'wal_flush') =
       (SELECT commits_timed FROM walpilot.status) AS every_commit_flushed,
       commits AS standby_commits, total_us AS standby_us,
       p50_us IS NULL AND p99_us IS NULL AS standby_percentiles_null
  FROM walpilot.commit_phases WHERE phase = 'standby_wait';
-- asynchronous commits do not enter the durable histogram
SELECT walpilot.reset() IS NOT NULL AS reset_ok;
SET synchronous_commit = off;
INSERT INTO wp_instr VALUES (3);
RESET synchronous_commit;
SELECT commits_timed = 0 AS async_not_timed FROM walpilot.status;
DROP TABLE wp_instr;
-- readers for pg_monitor, nothing for others
CREATE ROLE regress_wp_instr_monitor LOGIN IN ROLE pg_monitor;
CREATE ROLE regress_wp_instr_plain LOGIN;
SET ROLE regress_wp_instr_monitor;
-- what the profile and the timeline hold depends on the worker's timing:
-- those two are permission checks (the query runs; it prints a constant)
SELECT 'read' AS wait_profile FROM (SELECT count(*) FROM walpilot.wait_profile) s;
SELECT count(*) AS buckets FROM walpilot.commit_latency;
SELECT 'read' AS timeline FROM (SELECT count(*) FROM walpilot.timeline) s;
SELECT count(*) AS rows FROM walpilot.status;
SELECT count(*) AS reasons FROM walpilot.commit_groups;
SELECT count(*) AS phases FROM walpilot.commit_phases;
SET ROLE regress_wp_instr_plain;
SELECT count(*) FROM walpilot.wait_profile;
SELECT count(*) FROM walpilot.commit_latency;
SELECT count(*) FROM walpilot.timeline;
SELECT count(*) FROM walpilot.commit_groups;
SELECT count(*) FROM walpilot.commit_phases;
RESET ROLE;
GRANT USAGE ON SCHEMA walpilot TO regress_wp_instr_plain;
SET ROLE regress_wp_instr_plain;
SELECT count(*) FROM walpilot.wait_profile_data();
SELECT count(*) FROM walpilot.commit_latency_data();
SELECT count(*) FROM walpilot.timeline_data_0_2();
SELECT count(*) FROM walpilot.commit_groups_data();
SELECT count(*) FROM walpilot.commit_phases_data();
RESET ROLE;
REVOKE USAGE ON SCHEMA walpilot FROM regress_wp_instr_plain;
DROP ROLE regress_wp_instr_monitor;
DROP ROLE regress_wp_instr_plain;
