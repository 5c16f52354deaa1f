# A bad walpilot.* value in postgresql.conf at server start: the server
# starts, logs a WARNING, runs with the built-in default, and
# walpilot.setting_errors lists the line.  A bad value at reload keeps the
# previous value and is listed too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('guc_start', conf => qq{
shared_preload_libraries = 'walpilot'
walpilot.sample_interval = 0
walpilot.mode = 'autopilot'
});
$node->start;
my $log = slurp_file($node->logfile);
like($log, qr/WARNING:  0 ms is outside the valid range for parameter "walpilot.sample_interval" \(1( ms)? .. 1000( ms)?\)/,
	'a WARNING names the bad sample_interval');
like($log, qr/WARNING:  invalid value for parameter "walpilot.mode": "autopilot"/,
	'a WARNING names the bad mode');
is($node->safe_psql('postgres', 'SHOW walpilot.sample_interval'), '10ms',
	'the built-in default sample_interval is in force');
is($node->safe_psql('postgres', 'SHOW walpilot.mode'), 'observe',
	'the built-in default mode is in force');

$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
is($node->safe_psql('postgres', 'SELECT mode, sample_interval_ms FROM walpilot.status'),
	'observe|10', 'the worker runs with the defaults');
is($node->safe_psql('postgres', q{
	SELECT string_agg(name || '=' || file_value || ' in force: ' || value_in_force, ', ' ORDER BY name)
	  FROM walpilot.setting_errors}),
	'walpilot.mode=autopilot in force: observe, walpilot.sample_interval=0 in force: 10',
	'walpilot.setting_errors lists both lines with the value in force');
like($node->safe_psql('postgres',
		"SELECT sourcefile || ':' || sourceline FROM walpilot.setting_errors WHERE name = 'walpilot.mode'"),
	qr/postgresql\.conf:\d+$/, 'with the file and line');

# pg_monitor members can read it
$node->safe_psql('postgres', 'CREATE ROLE regress_mon LOGIN IN ROLE pg_monitor');
is($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.setting_errors',
		extra_params => [ '-U', 'regress_mon' ]),
	'2', 'a pg_monitor member sees the errors');

# fix the file; then a bad value at reload keeps the previous value
$node->append_conf('postgresql.conf', qq{
walpilot.sample_interval = 20ms
walpilot.mode = observe
});
$node->reload;
ok($node->poll_query_until('postgres',
		"SELECT sample_interval_ms = 20 FROM walpilot.status"),
	'a good value applies at reload');
is($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.setting_errors'),
	'0', 'no error is listed once the lines are good');
my $offset = -s $node->logfile;
$node->append_conf('postgresql.conf', "walpilot.sample_interval = 5000\n");
$node->reload;
# the postmaster has read the file (a session forked before would show the
# previous value anyway)
ok($node->wait_for_log(
		qr/5000( ms)? is outside the valid range for parameter "walpilot.sample_interval"/,
		$offset),
	'the bad value at reload is reported in the log');
is($node->safe_psql('postgres', 'SHOW walpilot.sample_interval'), '20ms',
	'a bad value at reload keeps the previous value');
is($node->safe_psql('postgres',
		"SELECT file_value || ' in force: ' || value_in_force FROM walpilot.setting_errors"),
	'5000 in force: 20', 'and is listed');
$node->stop;
done_testing();
