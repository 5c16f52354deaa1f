# Crashes in the middle of the pilot's work: SIGKILL of a backend under a
# flush-bound load while a gather trial runs (crash restart), and an
# immediate stop in the middle of a trial.  Each time the shared state is
# reinitialised, walpilot resumes, no trial value is left behind in any
# session or file, and the DBA's configuration is byte-for-byte intact.
# Also: the pilot runs its trial with postgresql.auto.conf unwritable.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

my $node = walpilot_node('crash', qq{restart_after_crash = on
walpilot.mode = 'tune'
max_connections = 40});
start_emulated($node, 'hdd');
# the DBA's own lines in postgresql.auto.conf, which must survive as they are
$node->safe_psql('postgres', q{ALTER SYSTEM SET work_mem = '5MB'});
$node->safe_psql('postgres', q{ALTER SYSTEM SET maintenance_work_mem = '77MB'});
$node->reload;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (id bigserial, v int)');
my $auto_conf = $node->data_dir . '/postgresql.auto.conf';
my $auto_before = slurp_file($auto_conf);

my $in_gather = q{SELECT pilot_state = 'trial' AND pilot_candidate LIKE 'gather%' FROM walpilot.status};
# what a new session runs with, after its first transaction
my $show = "SELECT 1 \\g /dev/null\nSELECT current_setting('commit_delay') || '/' || current_setting('commit_siblings')";

sub no_trial_value_left
{
	my ($what) = @_;
	is($node->safe_psql('postgres', $show), '0/5',
		"$what: a new session runs with the DBA's commit_delay/commit_siblings");
	is($node->safe_psql('postgres',
			q{SELECT pilot_state || '/' || coalesce(pilot_candidate, '-') || '/' || worker_starts FROM walpilot.status}),
		'idle/-/1', "$what: the pilot starts idle, state reinitialised");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.decisions'),
		'0', "$what: the decision log starts afresh");
	is(slurp_file($auto_conf), $auto_before,
		"$what: postgresql.auto.conf byte-for-byte as the DBA left it");
}

#
# SIGKILL of a client backend in the middle of a gather trial
#
my $load = start_insert_load($node, 8, 120);
ok($node->poll_query_until('postgres', $in_gather), 'a gather trial runs under the load');
my $victim = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity
	 WHERE backend_type = 'client backend' AND query LIKE 'INSERT INTO t %' LIMIT 1});
my $log_offset = -s $node->logfile;
kill 'KILL', $victim;
$load->finish;
wait_crash_restart($node, $log_offset);
ok($node->poll_query_until('postgres',
		'SELECT worker_pid IS NOT NULL AND ticks > 0 FROM walpilot.status'),
	'after the crash restart the worker runs');
# 18 names the process by its type: "client backend", not "server process"
like(slurp_file($node->logfile, $log_offset),
	qr/(?:server process|client backend) \(PID $victim\) was terminated by signal 9.*all server processes terminated; reinitializing/s,
	'the postmaster crash-restarted');
no_trial_value_left('after SIGKILL during gather');

#
# walpilot resumes: the pilot tries again; this time with the
# configuration file unwritable (a directory where ALTER SYSTEM writes its
# temporary file), which the pilot must not need
#
my $tmpdir_trap = "$auto_conf.tmp";
mkdir $tmpdir_trap or die "mkdir: $!";
$load = start_insert_load($node, 8, 120);
ok($node->poll_query_until('postgres', $in_gather),
	'walpilot resumes: a new gather trial after the crash restart');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions WHERE outcome IS NOT NULL}),
	'the trial ends with an outcome while postgresql.auto.conf is unwritable');
my ($ret, $out, $err) = $node->psql('postgres', q{ALTER SYSTEM SET work_mem = '6MB'});
like($err, qr/could not open file .*postgresql\.auto\.conf\.tmp/,
	'(postgresql.auto.conf was indeed unwritable)');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server up');
rmdir $tmpdir_trap or die "rmdir: $!";
is(slurp_file($auto_conf), $auto_before, 'postgresql.auto.conf untouched');

#
# immediate stop in the middle of a trial, then a normal start
#
$node->safe_psql('postgres', 'SELECT walpilot.reset()');
$node->append_conf('postgresql.conf', "walpilot.tune_interval = 10\n");
$node->reload;
ok($node->poll_query_until('postgres', q{SELECT pilot_state IN ('trial', 're-check') FROM walpilot.status}),
	'a trial runs again');
$node->stop('immediate');
$load->finish;
start_emulated($node, 'hdd');
no_trial_value_left('after an immediate stop mid-trial');
unlike(slurp_file($node->logfile), qr/PANIC/, 'no PANIC in the whole run');

$node->stop;
done_testing();
