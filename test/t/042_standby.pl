# Replication: a synchronous streaming standby while the pilot runs a
# gather trial on the primary (commits keep flowing, the standby keeps up);
# a fast shutdown of the primary in the middle of the trial (walsenders
# finish, the standby has everything up to the shutdown checkpoint); and
# the hot standby itself with walpilot preloaded.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

my $primary = walpilot_node('primary', q{
walpilot.mode = 'tune'
max_connections = 40
}, init => { allows_streaming => 1 });
start_emulated($primary, 'hdd');
$primary->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (id bigserial, v int)');
$primary->backup('b');
my $standby = new_node('standby', backup => [ $primary, 'b', has_streaming => 1 ]);
$standby->start;
my $standby_auto = slurp_file($standby->data_dir . '/postgresql.auto.conf');
$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
$primary->reload;
ok($primary->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'}),
	'the standby is synchronous');

my $script = $primary->basedir . '/insert.sql';
open my $fh, '>', $script or die;
print $fh "INSERT INTO t (v) VALUES (1);\n";
close $fh;
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', 8, '-j', 2, '-T', 120,
	  '-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'>', \$out, '2>', \$err);

#
# synchronous replication under gather
#
ok($primary->poll_query_until('postgres',
		q{SELECT pilot_state = 'trial' AND pilot_candidate LIKE 'gather%' FROM walpilot.status}),
	'a gather trial runs on the primary with a synchronous standby');
my $c0 = $primary->safe_psql('postgres', 'SELECT count(*) FROM t');
# a fixed window: the commits in it are the measurement
sleep 2;
my $c1 = $primary->safe_psql('postgres', 'SELECT count(*) FROM t');
cmp_ok($c1 - $c0, '>', 20, 'commits keep flowing during gather under synchronous replication ('
	  . ($c1 - $c0) . ' in 2 s)');
cmp_ok($standby->safe_psql('postgres', 'SELECT count(*) FROM t'), '>=', $c0,
	'the synchronous standby has every commit acknowledged before');
is($primary->safe_psql('postgres',
		q{SELECT pilot_state = 'trial' AND pilot_candidate LIKE 'gather%' FROM walpilot.status}),
	't', 'still in the gather trial');
is($primary->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	 WHERE wait_event = 'SyncRep' AND now() - query_start > interval '5 s'}),
	'0', 'no commit stuck waiting for the standby');

#
# fast shutdown of the primary during gather
#
my $t_stop = time;
$primary->stop('fast');
$load->finish;
cmp_ok(time - $t_stop, '<', 30, 'fast shutdown completes (walsenders finish)');
my ($stdout) = run_command([ 'pg_controldata', $primary->data_dir ]);
my ($ckpt) = $stdout =~ /^Latest checkpoint location:\s+(\S+)/m;
like($stdout, qr/^Database cluster state:\s+shut down$/m, 'the primary shut down cleanly');
ok($standby->poll_query_until('postgres',
		"SELECT pg_last_wal_replay_lsn() > '$ckpt'::pg_lsn"),
	"the standby replayed past the primary's shutdown checkpoint $ckpt");
$primary->start;
is($standby->safe_psql('postgres', 'SELECT count(*) FROM t'),
	$primary->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'the standby has every row the primary has');

#
# the hot standby with walpilot preloaded
#
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'standby in recovery');
ok($standby->poll_query_until('postgres',
		'SELECT worker_pid IS NOT NULL AND ticks > 0 FROM walpilot.status'),
	'the worker runs on the hot standby');
# every view on the hot standby, with what a standby that replayed the
# load above (and took no commit of its own) must show
is($standby->safe_psql('postgres', 'SELECT count(*) FROM walpilot.status'),
	'1', 'standby: walpilot.status has its row');
is($standby->safe_psql('postgres', q{
	SELECT (count(*) FILTER (WHERE samples > 0) > 0) || '/' || sum(commits)
	    || '/' || (sum(wal_bytes) > 0)
	  FROM walpilot.timeline}),
	'true/0/true', 'standby: walpilot.timeline has sampled seconds, no commit, the WAL replayed');
is($standby->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM walpilot.wait_profile
	 WHERE backend_type IN ('startup', 'walreceiver') AND samples > 0}),
	't', 'standby: walpilot.wait_profile samples the startup process and the walreceiver');
is($standby->safe_psql('postgres',
		'SELECT (count(*) > 0) || \'/\' || sum(commits) FROM walpilot.commit_latency'),
	'true/0', 'standby: walpilot.commit_latency has its buckets and no commit');
is($standby->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.storage WHERE kind = 'flush_estimate'}),
	'1', 'standby: walpilot.storage has its flush_estimate row');
# a CHECKPOINT on the standby, at the primary's shutdown checkpoint
# replayed above, is recorded from the line that starts it (the same on
# every version: 025 checks the end line, which is not)
$standby->safe_psql('postgres', 'CHECKPOINT');
ok($standby->poll_query_until('postgres', 'SELECT count(*) > 0 FROM walpilot.checkpoints'),
	'standby: walpilot.checkpoints records the CHECKPOINT on the standby');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM walpilot.decisions'),
	'0', 'standby: walpilot.decisions is empty (no trial, no change)');
is($standby->safe_psql('postgres', q{
	SELECT string_agg(name || '/' || managed_by, ',' ORDER BY name) FROM walpilot.settings}),
	'checkpoint_flush_after/default,commit_delay/default,commit_siblings/default',
	'standby: walpilot.settings lists its knobs, none managed by walpilot');
# the configured commit_delay and commit_siblings (the defaults); NULL fails
is($standby->safe_psql('postgres', q{SELECT coalesce(pilot_setting, '<null>') FROM walpilot.status}),
	'delay 0 us, siblings 5', 'pilot_setting on the standby is the configured setting');
is($standby->safe_psql('postgres', 'SELECT current_setting(\'commit_delay\')'), '0',
	'no trial value on the standby');
is(slurp_file($standby->data_dir . '/postgresql.auto.conf'), $standby_auto,
	'the standby\'s postgresql.auto.conf is untouched');
unlike(slurp_file($standby->logfile), qr/PANIC|walpilot.*ERROR|ERROR.*walpilot/,
	'no walpilot error or PANIC on the standby');

$standby->stop;
$primary->stop;
done_testing();
