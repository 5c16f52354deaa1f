# Faults of the walpilot worker itself: terminated over and over, erroring
# over and over in its periodic probe, killed with SIGKILL.  The server
# stays up (or, for SIGKILL, crash-restarts as for any child), the worker
# comes back every time, and the shared state it serves stays sane.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = walpilot_node('worker_faults', 'restart_after_crash = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
my $auto_conf = $node->data_dir . '/postgresql.auto.conf';
my $auto_before = slurp_file($auto_conf);

my $worker_q =
  "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walpilot worker'";

# everything a reader can see is well formed: one status row with a live
# worker, no negative counter anywhere
sub state_is_sane
{
	my ($what) = @_;
	is($node->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM walpilot.status
		         WHERE worker_pid IS NOT NULL AND ticks > 0 AND worker_starts >= 1
		           AND samples_taken >= 0 AND missed_ticks >= 0 AND commits_timed >= 0)
		    || '/' || (SELECT count(*) FROM walpilot.commit_latency WHERE commits < 0)
		    || '/' || (SELECT count(*) FROM walpilot.wait_profile WHERE samples < 0 OR seconds < 0)
		    || '/' || (SELECT count(*) FROM walpilot.timeline
		                WHERE commits < 0 OR async_commits < 0 OR wal_bytes < 0
		                   OR wal_records < 0 OR wal_syncs < 0 OR samples < 0)
		    || '/' || (SELECT count(*) FROM walpilot.storage WHERE samples < 0)}),
		'1/0/0/0/0', "$what: shared state is sane");
}

ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($worker_q) w"),
	'worker running');
$node->safe_psql('postgres',
	'CREATE TABLE t (v int); INSERT INTO t SELECT generate_series(1, 1000)');

#
# SIGTERM, five times in a row, each as soon as the new worker appears
#
my $pm_start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $log_offset = -s $node->logfile;
my %pids;
foreach my $round (1 .. 5)
{
	my $pid;
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM ($worker_q) w WHERE pid NOT IN (0"
		  . join('', map { ",$_" } keys %pids) . ')')
	  or last;
	$pid = $node->safe_psql('postgres', $worker_q);
	$pids{$pid} = 1;
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
}
is(scalar(keys %pids), 5, 'five workers terminated, each one replaced');
ok($node->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL AND worker_pid NOT IN ("
		  . join(',', keys %pids) . ") FROM walpilot.status"),
	'a sixth worker runs after five terminations');
is($node->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'),
	'6', 'worker_starts counts every restart');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$pm_start, 'the server did not restart');
unlike(slurp_file($node->logfile, $log_offset),
	qr/terminating any other active server processes|was terminated by signal/,
	'no crash-restart');
my $t0 = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
ok($node->poll_query_until('postgres', "SELECT ticks > $t0 FROM walpilot.status"),
	'the new worker ticks');
state_is_sane('after five terminations');

#
# an error the worker meets again and again: its periodic probe fails in a
# read-only WAL directory every walpilot.probe_interval
#
my $waldir = $node->data_dir . '/pg_wal';
my $pid = $node->safe_psql('postgres', $worker_q);
$log_offset = -s $node->logfile;
$node->append_conf('postgresql.conf', "walpilot.probe_interval = 10\n");
chmod(0555, $waldir) or die "chmod: $!";
$node->reload;
wait_until('the periodic probe failed repeatedly and said so', 60, sub {
	my @hits = (slurp_file($node->logfile, $log_offset) =~ /walpilot periodic probe failed/g);
	return @hits >= 2;
});
chmod(0700, $waldir) or die "chmod: $!";
$node->append_conf('postgresql.conf', "walpilot.probe_interval = 0\n");
$node->reload;
is($node->safe_psql('postgres', $worker_q), $pid,
	'the worker kept running through its repeated errors');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$pm_start, 'the server did not restart');
unlike(slurp_file($node->logfile, $log_offset), qr/PANIC/, 'no PANIC');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'0', 'no probe file left');
state_is_sane('after repeated probe errors');

#
# SIGKILL of the worker: the postmaster treats it as a crash of a child
# with shared memory access and reinitialises; walpilot starts afresh
#
$pid = $node->safe_psql('postgres', $worker_q);
$log_offset = -s $node->logfile;
kill 'KILL', $pid;
wait_crash_restart($node, $log_offset);
ok($node->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL AND worker_pid <> $pid AND ticks > 0 FROM walpilot.status"),
	'after SIGKILL of the worker, a new worker runs');
like(slurp_file($node->logfile, $log_offset), qr/all server processes terminated; reinitializing/,
	'the postmaster crash-restarted');
is($node->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'),
	'1', 'shared state was reinitialised');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '1000', 'data intact');
state_is_sane('after SIGKILL of the worker');

is(slurp_file($auto_conf), $auto_before, 'postgresql.auto.conf unchanged by all of it');
$node->stop;
done_testing();
