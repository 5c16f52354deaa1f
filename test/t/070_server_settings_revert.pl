# Server settings (checkpoint_flush_after) reach the checkpointer through
# postgresql.auto.conf and a reload; every way out -- walpilot.revert(),
# mode off, DROP EXTENSION, an immediate stop, a crash mid-trial followed by
# a restart, a killed postmaster followed by a restart -- leaves
# postgresql.auto.conf byte for byte as the DBA had it, their own hand-made
# lines included.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT :server_settings);

# The DBA's own file (an ALTER SYSTEM line, a hand-written comment and a
# hand-written line without the final newline) is the module's fixture.
my $node = server_settings_node('ssrevert');
my $pgdata = $node->data_dir;
my $autoconf = "$pgdata/postgresql.auto.conf";
my $dba_bytes = dba_auto_conf();

start_load();

# ---- a trial value in force: file, record, SHOW and pg_settings agree ----
wait_for_trial_value('first trial');
is(slurp_bytes("$pgdata/pg_walpilot/postgresql.auto.conf.dba"), $dba_bytes,
	"the DBA's file is saved byte for byte before the first change");
like(slurp_bytes("$pgdata/pg_walpilot/server_settings"),
	qr/^setting checkpoint_flush_after 512kB - not-set\(default\)$/m,
	'the record names the value written and what the DBA had (not set)');
my $b = slurp_bytes($autoconf);
is(substr($b, 0, length($dba_bytes)), $dba_bytes,
	"the DBA's lines stay as they were, walpilot's two lines follow");
# The trial alternates values checkpoint by checkpoint: one query sees the
# file, SHOW, pg_settings and walpilot.settings at one moment.
ok($node->poll_query_until('postgres', q{
	SELECT current_setting('checkpoint_flush_after') = '512kB'
	   AND s.setting = '64' AND s.sourcefile LIKE '%postgresql.auto.conf'
	   AND w.managed_by = 'walpilot' AND w.configured_value = '256kB'
	   AND w.effective_value = '512kB'
	   AND pg_read_file('postgresql.auto.conf') LIKE '%checkpoint_flush_after = ''512kB''%'
	  FROM pg_settings s, walpilot.settings w
	 WHERE s.name = 'checkpoint_flush_after' AND w.name = s.name}),
	'SHOW, pg_settings (from postgresql.auto.conf) and walpilot.settings (managed by walpilot, the DBA configured 256kB) agree with the file');
ok($node->poll_query_until('postgres', q{
	SELECT current_setting('checkpoint_flush_after') = '256kB'
	   AND s.setting = '32' AND w.managed_by = 'default'
	   AND pg_read_file('postgresql.auto.conf') NOT LIKE '%walpilot%'
	  FROM pg_settings s, walpilot.settings w
	 WHERE s.name = 'checkpoint_flush_after' AND w.name = s.name}),
	'in the current arm of the trial they agree on the configured 256kB');
is($node->safe_psql('postgres', 'SHOW work_mem'), '8MB',
	"the DBA's own settings still apply");

# ---- walpilot.revert() ----
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
wait_for_dba_file('walpilot.revert()');
ok($node->poll_query_until('postgres', q{
	SELECT setting = '32' FROM pg_settings WHERE name = 'checkpoint_flush_after'}),
	'after revert the configured 256kB is in force');
# Only a checkpoint that started after the revert counts (the trial's own
# 256kB arm ran before it).  Any checkpoint will do, so one is requested
# rather than waited for: the checkpointer records the value it starts with.
my $reverted_at = $node->safe_psql('postgres', q{
	SELECT max(decided_at) FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE '%walpilot.revert() by %'});
ok($reverted_at ne '', "the revert is a decision row ($reverted_at)");
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->safe_psql('postgres', qq{
	SELECT string_agg(DISTINCT flush_after_kb::text, ' ')
	  FROM walpilot.checkpoints WHERE started_at > '$reverted_at'}),
	'256', 'the checkpoints that started after the revert ran with 256kB');

# ---- mode off ----
wait_for_trial_value('after tune_interval');
$node->append_conf('postgresql.conf', "walpilot.mode = 'observe'\n");
$node->reload;
wait_for_dba_file('mode observe');
$node->append_conf('postgresql.conf', "walpilot.mode = 'tune'\n");
$node->reload;

# ---- DROP EXTENSION ----
wait_for_trial_value('tune again');
$node->safe_psql('postgres', 'DROP EXTENSION walpilot');
wait_for_dba_file('DROP EXTENSION');
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');

# ---- immediate stop in the middle of a trial, then a restart ----
wait_for_trial_value('before an immediate stop');
stop_load();
$node->stop('immediate');
is(slurp_bytes($autoconf), $dba_bytes,
	"immediate stop: the postmaster's exit puts the DBA's file back");
$node->start;
start_load();

# ---- a crash of a child mid-trial: restart, revert before any checkpoint ----
wait_for_trial_value('before a crash');
my $log_offset = -s $node->logfile;
my $wpid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walpilot worker'");
stop_load();
kill 'KILL', $wpid;
wait_crash_restart($node, $log_offset);
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'walpilot worker'}),
	'the server restarts after the crash');
wait_for_dba_file('crash and restart');
# Only what follows the crash counts: a timed checkpoint may start between
# taking the log offset and the kill (the trial value is written at a
# checkpoint's end, 3 s before the next one starts).
my $log = substr(slurp_bytes($node->logfile), $log_offset);
my $crash_at = index($log, 'all server processes terminated; reinitializing');
my $after = $crash_at >= 0 ? substr($log, $crash_at) : '';
my $revert_at = index($after, 'walpilot put postgresql.auto.conf back');
my $ckpt_at = $after =~ /checkpoint starting: (?:time|wal)/ ? $-[0] : -1;
ok($crash_at >= 0 && $revert_at >= 0 && ($ckpt_at < 0 || $revert_at < $ckpt_at),
	'after the crash the revert comes before the first spread checkpoint')
  or diag("crash at $crash_at, revert at $revert_at, checkpoint at $ckpt_at:\n"
	  . join("\n", grep { /reinitializing|walpilot put|checkpoint starting|ready to accept/ }
		  split /\n/, $after));
start_load();

# ---- the postmaster and the worker killed outright (as by a power loss) ----
wait_for_trial_value('before the postmaster is killed');
$wpid = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walpilot worker'");
my ($pmpid) = split /\n/, slurp_bytes("$pgdata/postmaster.pid");
# the trial value may have gone again (the arms alternate): kill while it
# is in the file
wait_until('the trial value is in postgresql.auto.conf to kill the postmaster on',
	60, sub { (slurp_bytes($autoconf) // '') =~ /'512kB'/ });
# The worker is stopped first: on a busy machine the test could lose the
# CPU between two kills, and a worker that sees its postmaster die first
# reverts the file on its way out.
kill 'STOP', $wpid;
kill 'KILL', $pmpid;
kill 'KILL', $wpid;
stop_load();
wait_until('the killed postmaster is gone', 30, sub { !kill 0, $pmpid });
# The one case nothing can revert (a start without walpilot would read
# this file): the comment says where the DBA's file is, and that saved
# file is exactly theirs (the documented recovery copies it back).
$b = slurp_bytes($autoconf);
like($b, qr/# walpilot trial value: .*pg_walpilot\/postgresql.auto.conf.dba\ncheckpoint_flush_after = '512kB'\n\z/,
	'killed postmaster and worker: the trial line carries a comment naming the saved file');
is(slurp_bytes("$pgdata/pg_walpilot/postgresql.auto.conf.dba"), $dba_bytes,
	"killed postmaster and worker: the saved file is the DBA's, byte for byte");
# a restart with walpilot puts it back itself (once the orphaned children,
# which exit on postmaster death, have let go of shared memory)
my $started = 0;
for (1 .. 30)
{
	if (system('pg_ctl', '-D', $pgdata, '-l', $node->logfile, '-w', '-s',
			'start') == 0)
	{
		$started = 1;
		last;
	}
	sleep 1;	# a pause between attempts; pg_ctl -w itself waits
}
ok($started, 'the server starts again');
$node->_update_pid(1);
wait_for_dba_file('killed postmaster, restart with walpilot');

$node->stop;
is(slurp_bytes($autoconf), $dba_bytes, 'a clean stop leaves the DBA\'s file');
done_testing();
