/* walpilot--0.1--0.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walpilot UPDATE TO '0.2'" to load this file. \quit

-- A fresh CREATE EXTENSION runs walpilot--0.1.sql and then this script, so
-- an upgraded database and a new one have the same objects by construction.
-- Objects new in 0.2 are created here; a view whose columns change is
-- dropped and created again (CREATE OR REPLACE VIEW can only append).

--
-- recommendations: settings walpilot does not tune, from what it measured
--
CREATE FUNCTION walpilot.recommendations_data(
    OUT setting text,
    OUT current_value text,
    OUT recommended_value text,
    OUT requires_restart boolean,
    OUT confidence double precision,
    OUT evidence jsonb,
    OUT apply_sql text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_recommendations_data'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED
-- its queries (SPI) must not resolve names through the caller's path
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION walpilot.recommendations_data() IS
    'the function behind walpilot.recommendations';

CREATE VIEW walpilot.recommendations AS
    SELECT * FROM walpilot.recommendations_data();

COMMENT ON VIEW walpilot.recommendations IS
    'settings to change, each from walpilot''s measurements (evidence), with a confidence in [0, 1] and the SQL that applies it; a row disappears when its evidence does';

REVOKE ALL ON FUNCTION walpilot.recommendations_data() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.recommendations_data() TO pg_monitor;
REVOKE ALL ON walpilot.recommendations FROM PUBLIC;
GRANT SELECT ON walpilot.recommendations TO pg_monitor;

--
-- prediction: what grouping the commits would give the last minute's load
--
CREATE FUNCTION walpilot.prediction()
RETURNS jsonb
AS 'MODULE_PATHNAME', 'walpilot_prediction'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION walpilot.prediction() IS
    'the commit-path model over the last 60 s: verdict (tune would win, nothing to win, out of the model''s scope, no evidence), why, the predicted and current commits/s, the predicted gain and p99, and the inputs';

REVOKE ALL ON FUNCTION walpilot.prediction() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.prediction() TO pg_monitor;

--
-- report: one text for psql over the views above
--
-- pilot_reason is read as to_jsonb(s) ->> 'pilot_reason', so the report
-- works with and without that column of walpilot.status.
CREATE FUNCTION walpilot.report()
RETURNS text
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $report$
DECLARE
    out text[] := ARRAY[]::text[];
    st jsonb;
    pred jsonb;
    standby boolean := pg_is_in_recovery();
    fsync_on boolean := current_setting('fsync')::boolean;
    win int := 60;
    secs int;
    busy int;
    commits_s float8;
    async_s float8;
    p50 float8;
    p99 float8;
    active float8;
    cpf float8;
    sby_share float8;
    flush_us float8;
    flush_src text;
    lim float8;
    g record;
    r record;
    n int;
    line text;
BEGIN
    SELECT to_jsonb(s) INTO st FROM walpilot.status s;
    out := out || format('walpilot report, %s (PostgreSQL %s, walpilot %s, mode %s, %s)',
        to_char(now(), 'YYYY-MM-DD HH24:MI:SS TZ'), current_setting('server_version'),
        st ->> 'version', st ->> 'mode', CASE WHEN standby THEN 'standby' ELSE 'primary' END);

    -- the commit path
    SELECT count(*) FILTER (WHERE samples > 0),
           count(*) FILTER (WHERE commits + async_commits > 0),
           avg(commits) FILTER (WHERE commits + async_commits > 0),
           avg(async_commits) FILTER (WHERE commits + async_commits > 0),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY commit_p50_us),
           percentile_cont(0.5) WITHIN GROUP (ORDER BY commit_p99_us),
           avg(active_backends) FILTER (WHERE commits > 0),
           sum(commits)::float8 / nullif(sum(wal_flushes), 0),
           sum(standby_wait_share * commits) FILTER (WHERE standby_wait_share > 0) /
               nullif(sum(commits) FILTER (WHERE standby_wait_share IS NOT NULL), 0)
      INTO secs, busy, commits_s, async_s, p50, p99, active, cpf, sby_share
      FROM walpilot.timeline
     WHERE ts >= now() - make_interval(secs => win);
    SELECT us_p50, method INTO flush_us, flush_src
      FROM walpilot.storage WHERE kind = 'flush_estimate';

    out := out || ''::text || format('Commit path, last %s s of walpilot.timeline (%s s sampled, %s s with commits; rates over the latter)',
        win, coalesce(secs, 0), coalesce(busy, 0));
    IF coalesce(secs, 0) = 0 THEN
        out := out || '  no samples: the worker is not running or walpilot.mode is off'::text;
    ELSIF coalesce(busy, 0) = 0 THEN
        out := out || '  no commits'::text;
    ELSE
        out := out || format('  durable commits/s   %s (asynchronous %s/s)',
            round(commits_s::numeric, 1), round(async_s::numeric, 1));
        out := out || format('  commit latency      p50 %s us, p99 %s us (medians of the per-second values; commit record insert to flush return, or to the synchronous standby''s reply)',
            coalesce(round(p50::numeric)::text, '-'), coalesce(round(p99::numeric)::text, '-'));
        IF sby_share IS NOT NULL THEN
            out := out || format('  standby wait        %s %% of commit time (walpilot.commit_phases)%s',
                round((100 * sby_share)::numeric),
                CASE WHEN sby_share >= 0.5
                     THEN ': the synchronous standby, not the local flush, dominates' ELSE '' END);
        END IF;
        out := out || format('  WAL flush           %s',
            CASE WHEN NOT fsync_on THEN 'none: fsync = off'
                 WHEN flush_src IS NULL THEN 'no estimate yet'
                 ELSE format('%s us (from %s)', round(flush_us::numeric), flush_src) END);
        out := out || format('  commits per flush   %s',
            coalesce(round(cpf::numeric, 2)::text, '- (no flush led by a commit)'));
        -- why the groups closed (walpilot.commit_groups, per second here)
        SELECT coalesce(sum(groups_count_reached), 0) AS cr,
               coalesce(sum(groups_delay_expired), 0) AS de,
               coalesce(sum(groups_woken_early), 0) AS we,
               coalesce(sum(groups_no_delay), 0) AS nd
          INTO g
          FROM walpilot.timeline
         WHERE ts >= now() - make_interval(secs => win);
        IF g.cr + g.de + g.we + g.nd > 0 THEN
            out := out || format('  group closes        %s %% by count, %s %% delay ran out, %s %% woken early, %s %% no delay (of %s commit-led flushes)',
                round(100.0 * g.cr / (g.cr + g.de + g.we + g.nd)),
                round(100.0 * g.de / (g.cr + g.de + g.we + g.nd)),
                round(100.0 * g.we / (g.cr + g.de + g.we + g.nd)),
                round(100.0 * g.nd / (g.cr + g.de + g.we + g.nd)),
                g.cr + g.de + g.we + g.nd);
            IF g.cr > 0 THEN
                line := format('gather: %s %% of groups closed by count, %s commits per flush',
                    round(100.0 * g.cr / (g.cr + g.de + g.we + g.nd)),
                    coalesce(round(cpf::numeric, 1)::text, '-'));
                IF g.de > g.cr THEN
                    line := line || format('; the cap ran out on %s %%: the expected group did not arrive within it',
                        round(100.0 * g.de / (g.cr + g.de + g.we + g.nd)));
                END IF;
            ELSIF g.de + g.we > 0 THEN
                line := format('static delay: %s %% of sleeps ran out, %s commits per flush',
                    round(100.0 * g.de / (g.de + g.we)),
                    coalesce(round(cpf::numeric, 1)::text, '-'));
                IF cpf < 1.5 THEN
                    line := line || ': the sleep waits for commits that do not come';
                END IF;
            ELSE
                line := format('no delay: every commit-led flush went without sleeping, %s commits per flush',
                    coalesce(round(cpf::numeric, 1)::text, '-'));
            END IF;
            IF g.we > 0 AND g.we * 10 >= g.cr + g.de + g.we THEN
                line := line || format('; %s %% of sleeps were cut short by other signals',
                    round(100.0 * g.we / (g.cr + g.de + g.we)));
            END IF;
            out := out || format('  group commit        %s', line);
        END IF;
        IF flush_us > 0 AND commits_s > 0 AND fsync_on THEN
            lim := greatest(active, 1) * 1e6 / flush_us;
            out := out || format('  flush-cycle limit   N/F = %s active backends / %s ms = %s commits/s; measured %s (%s %%)',
                round(active::numeric, 1), round((flush_us / 1000)::numeric, 2),
                round(lim::numeric), round(commits_s::numeric), round((100 * commits_s / lim)::numeric));
        END IF;
        SELECT string_agg(format('%s %s %%', e, round(pct::numeric, 1)), ', ' ORDER BY pct DESC)
          INTO line
          FROM (SELECT CASE WHEN wait_event_type = 'CPU' THEN 'CPU'
                            ELSE wait_event_type || ':' || wait_event END AS e,
                       100 * seconds / nullif(sum(seconds) OVER (), 0) AS pct
                  FROM walpilot.wait_profile
                 WHERE backend_type = 'client backend' AND pct_of_active IS NOT NULL) w
         WHERE e IN ('IO:WALSync', 'IO:WALWrite', 'IO:WalSync', 'IO:WalWrite', -- 17 renamed them
                     'LWLock:WALWrite', 'LWLock:WALInsert', 'Timeout:CommitDelay', 'CPU')
           AND pct >= 0.05;
        out := out || format('  client backends'' active time since reset (sampled): %s',
            coalesce(line, 'nothing sampled'));
    END IF;

    -- checkpoints
    SELECT count(*) AS n_all,
           count(*) FILTER (WHERE reason = 'time') AS n_time,
           count(*) FILTER (WHERE reason = 'wal') AS n_wal,
           sum(stall_seconds) AS stall_s, max(commit_p99_us_during) AS p99_during,
           max(commit_p99_us_outside) AS p99_outside,
           avg(extract(epoch FROM finished_at - started_at)) AS avg_s
      INTO r
      FROM walpilot.checkpoints WHERE started_at > now() - interval '1 hour';
    out := out || ''::text || 'Checkpoints, last hour (walpilot.checkpoints)'::text;
    IF r.n_all = 0 THEN
        out := out || '  none'::text;
    ELSE
        out := out || format('  %s checkpoint(s) (%s timed, %s by max_wal_size), %s s on average',
            r.n_all, r.n_time, r.n_wal, coalesce(round(r.avg_s::numeric, 1)::text, '-'));
        out := out || format('  stalls: %s s with commits below 10 %% of the preceding minute; commit p99 up to %s us during a checkpoint, %s us outside',
            coalesce(r.stall_s::text, '-'), coalesce(round(r.p99_during::numeric)::text, '-'),
            coalesce(round(r.p99_outside::numeric)::text, '-'));
    END IF;

    -- the pilot
    out := out || ''::text || 'Pilot'::text;
    out := out || format('  commit_delay pilot: %s%s%s',
        coalesce(st ->> 'pilot_state', '-'),
        coalesce(', in force: ' || (st ->> 'pilot_setting'), ''),
        coalesce(', on trial: ' || nullif(st ->> 'pilot_candidate', ''), ''));
    IF st ? 'pilot_reason' AND st ->> 'pilot_reason' IS NOT NULL THEN
        out := out || format('  why: %s', st ->> 'pilot_reason');
    END IF;
    pred := walpilot.prediction();
    out := out || format('  prediction: %s (%s)', pred ->> 'verdict', pred ->> 'why');
    n := 0;
    FOR r IN SELECT * FROM (SELECT * FROM walpilot.decisions ORDER BY decided_at DESC LIMIT 10) d
             ORDER BY decided_at
    LOOP
        n := n + 1;
        out := out || format('  %s %s: %s -> %s, %s%s', to_char(r.decided_at, 'HH24:MI:SS'),
            r.setting, r.old_value, r.new_value, r.reason,
            coalesce('; ' || r.outcome, ''));
    END LOOP;
    IF n = 0 THEN
        out := out || '  no decisions yet'::text;
    END IF;
    -- max_wal_size, when walpilot may raise it (walpilot.tune_max_wal_size)
    FOR r IN SELECT * FROM walpilot.settings WHERE name = 'max_wal_size' LOOP
        out := out || format('  max_wal_size: %s (the DBA''s %s, in force %s)',
            CASE r.managed_by WHEN 'walpilot' THEN 'raised by walpilot'
                              WHEN 'dba' THEN 'the DBA''s: walpilot keeps off'
                              ELSE 'walpilot may raise it (walpilot.tune_max_wal_size)' END,
            r.configured_value, r.effective_value);
    END LOOP;

    -- recommendations
    out := out || ''::text || 'Recommendations (walpilot.recommendations)'::text;
    n := 0;
    FOR r IN SELECT * FROM walpilot.recommendations ORDER BY confidence DESC, setting LOOP
        n := n + 1;
        out := out || format('  %s: %s -> %s (confidence %s%s)', r.setting, r.current_value,
            r.recommended_value, r.confidence,
            CASE WHEN r.requires_restart THEN ', needs a restart' ELSE '' END);
        out := out || format('    %s', r.apply_sql);
    END LOOP;
    IF n = 0 THEN
        out := out || '  none: nothing measured calls for a change'::text;
    END IF;

    -- what walpilot would need to see to do more
    out := out || ''::text || 'To do more, walpilot would need'::text;
    n := array_length(out, 1);
    IF st ->> 'mode' = 'off' THEN
        out := out || '  walpilot.mode other than off: nothing is measured now'::text;
    ELSIF st ->> 'mode' = 'observe' THEN
        out := out || '  walpilot.mode = ''tune'' to try commit_delay on-line (ALTER SYSTEM SET walpilot.mode = ''tune''; SELECT pg_reload_conf();)'::text;
    ELSIF NOT current_setting('walpilot.tune_commit_delay')::boolean THEN
        out := out || '  walpilot.tune_commit_delay = on to tune commit_delay'::text;
    END IF;
    IF st ->> 'mode' <> 'off' AND NOT current_setting('walpilot.tune_max_wal_size')::boolean
       AND EXISTS (SELECT 1 FROM walpilot.recommendations WHERE setting = 'max_wal_size') THEN
        out := out || '  walpilot.tune_max_wal_size = on (with walpilot.mode = ''tune'') to let walpilot apply the max_wal_size recommendation itself'::text;
    END IF;
    IF standby THEN
        out := out || '  a primary: a standby has no commits to time or tune'::text;
    ELSIF NOT fsync_on THEN
        out := out || '  fsync = on: with fsync off there is no flush to measure or shorten'::text;
    ELSE
        IF coalesce(commits_s, 0) < 20 OR coalesce(active, 0) < 1.5 THEN
            out := out || format('  a durable-commit load of at least 20 commits/s from 2 or more backends (now %s/s, %s active)',
                round(coalesce(commits_s, 0)::numeric, 1), round(coalesce(active, 0)::numeric, 1));
        END IF;
        IF flush_us IS NOT NULL AND flush_us < 500 THEN
            out := out || format('  a WAL flush of 500 us or more (now %s us): commit_delay does not pay on fast storage',
                round(flush_us::numeric));
        END IF;
        IF NOT EXISTS (SELECT 1 FROM walpilot.storage WHERE kind = 'probe') THEN
            out := out || '  a probe of the WAL device for wal_sync_method advice: SELECT * FROM walpilot.probe();'::text;
        END IF;
        IF NOT current_setting('track_wal_io_timing')::boolean THEN
            out := out || '  track_wal_io_timing = on for pg_stat_wal flush times (a second flush-time source)'::text;
        END IF;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM walpilot.checkpoints WHERE started_at > now() - interval '1 hour') THEN
        out := out || '  checkpoints to look at (none in the last hour) for max_wal_size and checkpoint advice'::text;
    END IF;
    IF array_length(out, 1) = n THEN
        out := out || '  nothing more: it sees what it needs'::text;
    END IF;

    RETURN array_to_string(out, E'\n');
END
$report$;

COMMENT ON FUNCTION walpilot.report() IS
    'plain-text report for psql: the commit path, checkpoints, what the pilot did and why, recommendations with SQL, and what walpilot would need to see to do more';

REVOKE ALL ON FUNCTION walpilot.report() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.report() TO pg_monitor;

--
-- setting errors
--
-- walpilot.* lines of the configuration files that are not in force: a bad
-- value at server start leaves the built-in default (with a WARNING in the
-- log), a bad value at reload the previous one.  pg_file_settings is
-- superuser-only: a security-definer function shows walpilot's lines only.
CREATE FUNCTION walpilot.setting_errors_data(
    OUT sourcefile text,
    OUT sourceline integer,
    OUT name text,
    OUT file_value text,
    OUT error text)
RETURNS SETOF record
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT f.sourcefile, f.sourceline, f.name, f.setting, f.error
      FROM pg_catalog.pg_file_settings f
     WHERE f.name LIKE 'walpilot.%' AND f.error IS NOT NULL
     ORDER BY f.sourcefile, f.sourceline
$$;

CREATE VIEW walpilot.setting_errors AS
    SELECT e.sourcefile, e.sourceline, e.name, e.file_value,
           s.setting AS value_in_force, s.source AS source_in_force, e.error
      FROM walpilot.setting_errors_data() e
      LEFT JOIN pg_catalog.pg_settings s ON s.name = e.name;

REVOKE ALL ON FUNCTION walpilot.setting_errors_data() FROM PUBLIC;
REVOKE ALL ON walpilot.setting_errors FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.setting_errors_data() TO pg_monitor;
GRANT SELECT ON walpilot.setting_errors TO pg_monitor;
-- status: pilot_reason (why the pilot is idle or holding) and the gather
-- wake-up counters
--
-- The new columns come last, so CREATE OR REPLACE VIEW keeps the view and
-- every grant on it (a DBA's too).  The function's result changes, so it
-- gets a new name (as pg_stat_statements does), and whoever could run the
-- old one may run the new one.
CREATE FUNCTION walpilot.status_data_0_2(
    OUT mode text,
    OUT worker_pid integer,
    OUT worker_started_at timestamptz,
    OUT worker_starts bigint,
    OUT sample_interval_ms integer,
    OUT ticks bigint,
    OUT stats_reset_at timestamptz,
    OUT version text,
    OUT samples_taken bigint,
    OUT missed_ticks bigint,
    OUT commits_timed bigint,
    OUT pilot_state text,
    OUT pilot_setting text,
    OUT pilot_candidate text,
    OUT pilot_reason text,
    OUT gather_wakeups bigint,
    OUT gather_wakeups_misdirected bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'walpilot_status_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE OR REPLACE VIEW walpilot.status AS
    SELECT * FROM walpilot.status_data_0_2();

REVOKE ALL ON FUNCTION walpilot.status_data_0_2() FROM PUBLIC;
DO $grants$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT a.grantee::pg_catalog.regrole::pg_catalog.text AS role
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.oid = 'walpilot.status_data()'::pg_catalog.regprocedure
           AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0
    LOOP
        EXECUTE pg_catalog.format(
            'GRANT EXECUTE ON FUNCTION walpilot.status_data_0_2() TO %s', g.role);
    END LOOP;
END
$grants$;
DROP FUNCTION walpilot.status_data();

COMMENT ON VIEW walpilot.status IS
    'walpilot worker state: mode in force, worker process, loop passes, reset time, what the pilot does and why';

GRANT EXECUTE ON FUNCTION walpilot.status_data_0_2() TO pg_monitor;
GRANT SELECT ON walpilot.status TO pg_monitor;

--
-- pilots: each pilot's state, the value in force and why
--
CREATE FUNCTION walpilot.pilots_data(
    OUT pilot text,
    OUT state text,
    OUT setting text,
    OUT candidate text,
    OUT reason text,
    OUT model_trials integer,
    OUT predicted_gain double precision,
    OUT measured_gain double precision,
    OUT model_error double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_pilots_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.pilots_data() IS
    'the function behind walpilot.pilots';

CREATE VIEW walpilot.pilots AS
    SELECT * FROM walpilot.pilots_data();

COMMENT ON VIEW walpilot.pilots IS
    'each pilot (commit_delay, checkpoint_flush_after): its state, the value in force, the candidate on trial, why it is idle, waiting or holding, and its model graded by its trials (commit_delay: the last search''s first trial, predicted and measured ratio, and the mean |predicted / measured - 1|)';

REVOKE ALL ON FUNCTION walpilot.pilots_data() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.pilots_data() TO pg_monitor;
REVOKE ALL ON walpilot.pilots FROM PUBLIC;
GRANT SELECT ON walpilot.pilots TO pg_monitor;

--
-- timeline: per second, the commit-led flushes by why their group closed
--
-- Appended columns, so the view and its grants stay (as for status); the
-- function gets a new name because its result changes.
CREATE FUNCTION walpilot.timeline_data_0_2(
    OUT ts timestamptz,
    OUT samples integer,
    OUT missed_ticks integer,
    OUT active_backends double precision,
    OUT cpu_backends double precision,
    OUT commits bigint,
    OUT async_commits bigint,
    OUT commit_p50_us bigint,
    OUT commit_p95_us bigint,
    OUT commit_p99_us bigint,
    OUT commit_max_us bigint,
    OUT wal_write_lock_waiters double precision,
    OUT wal_insert_lock_waiters double precision,
    OUT wal_sync_waiters double precision,
    OUT wal_write_waiters double precision,
    OUT commit_delay_sleepers double precision,
    OUT wal_flushes bigint,
    OUT commits_per_flush double precision,
    OUT wal_bytes bigint,
    OUT wal_records bigint,
    OUT wal_fpi bigint,
    OUT wal_buffers_full bigint,
    OUT wal_writes bigint,
    OUT wal_syncs bigint,
    OUT wal_write_time_us bigint,
    OUT wal_sync_time_us bigint,
    OUT checkpointer_busy double precision,
    OUT checkpoint_started boolean,
    OUT groups_count_reached bigint,
    OUT groups_delay_expired bigint,
    OUT groups_woken_early bigint,
    OUT groups_no_delay bigint,
    OUT standby_wait_share double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_timeline_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.timeline_data_0_2() IS
    'the function behind walpilot.timeline';

CREATE OR REPLACE VIEW walpilot.timeline AS
    SELECT * FROM walpilot.timeline_data_0_2();

REVOKE ALL ON FUNCTION walpilot.timeline_data_0_2() FROM PUBLIC;
DO $grants$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT a.grantee::pg_catalog.regrole::pg_catalog.text AS role
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.oid = 'walpilot.timeline_data()'::pg_catalog.regprocedure
           AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0
    LOOP
        EXECUTE pg_catalog.format(
            'GRANT EXECUTE ON FUNCTION walpilot.timeline_data_0_2() TO %s', g.role);
    END LOOP;
END
$grants$;
DROP FUNCTION walpilot.timeline_data();

GRANT EXECUTE ON FUNCTION walpilot.timeline_data_0_2() TO pg_monitor;
GRANT SELECT ON walpilot.timeline TO pg_monitor;

--
-- commit_groups: why each group commit closed, since reset
--
CREATE FUNCTION walpilot.commit_groups_data(
    OUT reason text,
    OUT groups bigint,
    OUT commits bigint,
    OUT avg_group_size double precision,
    OUT avg_wait_us double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_commit_groups_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.commit_groups_data() IS
    'the function behind walpilot.commit_groups';

CREATE VIEW walpilot.commit_groups AS
    SELECT * FROM walpilot.commit_groups_data();

COMMENT ON VIEW walpilot.commit_groups IS
    'commit-led WAL flushes since reset by why their group closed (count_reached, delay_expired, woken_early, no_delay: groups, the commits each made durable, the leader''s sleep), then the commits that led no flush (follower, non_durable)';

REVOKE ALL ON FUNCTION walpilot.commit_groups_data() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.commit_groups_data() TO pg_monitor;
REVOKE ALL ON walpilot.commit_groups FROM PUBLIC;
GRANT SELECT ON walpilot.commit_groups TO pg_monitor;

--
-- commit_phases: where durable commits' time went, since reset
--
CREATE FUNCTION walpilot.commit_phases_data(
    OUT phase text,
    OUT commits bigint,
    OUT total_us bigint,
    OUT p50_us bigint,
    OUT p99_us bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walpilot_commit_phases_data'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION walpilot.commit_phases_data() IS
    'the function behind walpilot.commit_phases';

CREATE VIEW walpilot.commit_phases AS
    SELECT * FROM walpilot.commit_phases_data();

COMMENT ON VIEW walpilot.commit_phases IS
    'durable commits since reset split by phase: commit_delay (the flush leader''s sleep), wal_flush (insert, WALWriteLock, local WAL write and flush), standby_wait (the synchronous standby''s lag at the commit''s synchronous_commit level, calibrated to the sampled IPC:SyncRep time): commits that had the phase, its total, p50 and p99 in microseconds';

REVOKE ALL ON FUNCTION walpilot.commit_phases_data() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION walpilot.commit_phases_data() TO pg_monitor;
REVOKE ALL ON walpilot.commit_phases FROM PUBLIC;
GRANT SELECT ON walpilot.commit_phases TO pg_monitor;

--
-- watch_drop: a committed DROP EXTENSION walpilot puts the configured
-- values back.  The event trigger fires only for the statements that can
-- drop the extension, and its function watches the rest of the
-- transaction; nothing else pays for it.  ENABLE ALWAYS: it fires with
-- session_replication_role = replica too.
--
CREATE FUNCTION walpilot.watch_drop()
RETURNS event_trigger
AS 'MODULE_PATHNAME', 'walpilot_watch_drop'
LANGUAGE C;

COMMENT ON FUNCTION walpilot.watch_drop() IS
    'the function of the event trigger walpilot_watch_drop: watches a DROP that may remove the extension, which then puts the configured values back when it commits';

REVOKE ALL ON FUNCTION walpilot.watch_drop() FROM PUBLIC;

CREATE EVENT TRIGGER walpilot_watch_drop ON ddl_command_start
    WHEN TAG IN ('DROP EXTENSION', 'DROP SCHEMA', 'DROP OWNED')
    EXECUTE FUNCTION walpilot.watch_drop();

ALTER EVENT TRIGGER walpilot_watch_drop ENABLE ALWAYS;
