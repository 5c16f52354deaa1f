# The walpilot worker: visible, follows reloads, survives being terminated,
# comes back after a restart, and never takes the server down.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('worker', conf => qq{
shared_preload_libraries = 'walpilot'
restart_after_crash = on
});
$node->start;

sub worker_pid
{
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walpilot worker'");
}

ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'walpilot worker'"),
	'worker appears in pg_stat_activity as "walpilot worker"');

$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
my $pid = worker_pid();
is($node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status'),
	$pid, 'status.worker_pid is the worker in pg_stat_activity');
is($node->safe_psql('postgres', 'SELECT mode FROM walpilot.status'),
	'observe', 'default mode is observe');

# The loop runs: ticks advance at about 1000 / sample_interval per second.
my $t0 = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
# a fixed window: the ticks in it are the measurement
sleep 1;
my $t1 = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
cmp_ok($t1 - $t0, '>=', 20, "worker ticks advance (got " . ($t1 - $t0) . " in ~1 s)");
cmp_ok($t1 - $t0, '<=', 200, 'worker does not spin');

# A reload reaches the worker within a tick or two (generous bound).
$node->append_conf('postgresql.conf', "walpilot.mode = 'tune'\nwalpilot.sample_interval = 50\n");
$node->reload;
ok($node->poll_query_until('postgres',
		"SELECT mode = 'tune' AND sample_interval_ms = 50 FROM walpilot.status"),
	'mode and sample interval change by reload reach status');

# An invalid value in the file is refused on reload; the old value stays.
# The valid mode change in the same reload shows when the worker has
# read the file.
my $log_offset = -s $node->logfile;
$node->append_conf('postgresql.conf', "walpilot.sample_interval = 0\nwalpilot.mode = 'observe'\n");
$node->reload;
ok($node->wait_for_log(qr/0 ms is outside the valid range for parameter "walpilot.sample_interval"/,
		$log_offset), 'invalid value is reported in the log');
ok($node->poll_query_until('postgres', "SELECT mode = 'observe' FROM walpilot.status"),
	'the worker applies the valid line of that reload');
is($node->safe_psql('postgres', 'SELECT sample_interval_ms FROM walpilot.status'),
	'50', 'invalid reload value is not applied');
$node->append_conf('postgresql.conf', "walpilot.sample_interval = 10\n");
$node->reload;
ok($node->poll_query_until('postgres',
		"SELECT sample_interval_ms = 10 FROM walpilot.status"),
	'valid value applies again');

# pg_terminate_backend: the worker comes back, the server does not restart.
my $pm_start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
$pid = worker_pid();
$log_offset = -s $node->logfile;
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'walpilot worker' AND pid <> $pid"),
	'terminated worker is restarted');
ok($node->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL AND worker_pid <> $pid FROM walpilot.status"),
	'status shows the new worker');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$pm_start, 'server did not restart');
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/terminating any other active server processes/,
	'no crash-restart after terminating the worker');
like($log, qr/walpilot worker shutting down/, 'worker logged its clean exit');
is($node->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'),
	'2', 'worker_starts counts the restart');

# Server restart: worker and status come back.
$node->restart;
ok($node->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL AND ticks > 0 FROM walpilot.status"),
	'worker runs after a server restart');
is($node->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'),
	'1', 'shared state starts afresh after a restart');

$node->stop;
done_testing();
