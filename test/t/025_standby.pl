# walpilot on a hot standby: the worker runs (it starts at consistency, not
# at the end of recovery), samples the walreceiver and the startup process,
# records restartpoints, and observes only -- no trial, no setting changed
# -- until a promotion lets the pilot run.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $primary = new_node('primary', init => { allows_streaming => 1 }, conf => qq{
shared_preload_libraries = 'walpilot'
log_checkpoints = on
});
$primary->start;
$primary->safe_psql('postgres',
	'CREATE EXTENSION walpilot; CREATE TABLE t (id int, pad text)');
$primary->backup('b');

my $standby = new_node('standby', backup => [ $primary, 'b', has_streaming => 1 ],
	conf => qq{
walpilot.mode = tune
hot_standby = on
});
$standby->start;
$primary->wait_for_catchup($standby);
my $auto_conf = slurp_file($standby->data_dir . '/postgresql.auto.conf');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't',
	'the standby is in recovery');
ok($standby->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'walpilot worker'"),
	'the worker runs on the hot standby');
like($standby->safe_psql('postgres',
		"SELECT query FROM pg_stat_activity WHERE backend_type = 'walpilot worker'"),
	qr/standby: observe only/, 'its activity says it observes only');

# load on the primary streams to the standby
$primary->safe_psql('postgres',
	"INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 50000) g");
$primary->wait_for_catchup($standby);
my $t0 = $standby->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
ok($standby->poll_query_until('postgres',
		"SELECT ticks > $t0 FROM walpilot.status"),
	'the worker ticks on the standby');
ok($standby->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.wait_profile
	 WHERE backend_type IN ('walreceiver', 'startup')}),
	'the wait profile samples the walreceiver and the startup process');
ok($standby->poll_query_until('postgres',
		'SELECT count(*) >= 2 FROM walpilot.timeline WHERE samples > 0'),
	'the timeline fills on the standby');
cmp_ok($standby->safe_psql('postgres', 'SELECT sum(wal_bytes) FROM walpilot.timeline'),
	'>', 5_000_000, 'on the standby wal_bytes counts the WAL replayed');

my $st = $standby->safe_psql('postgres',
	"SELECT mode, pilot_state, coalesce(pilot_setting, '<null>'), pilot_candidate IS NULL FROM walpilot.status");
my ($mode, $pstate, $psetting, $nocand) = split /\|/, $st;
is($mode, 'tune', 'standby status: mode tune');
is($pstate, 'idle', 'standby status: the pilot is idle');
# the configured commit_delay and commit_siblings (the defaults), neither
# NULL nor empty
is($psetting, 'delay 0 us, siblings 5',
	'standby status: pilot_setting is the configured setting');
is($nocand, 't', 'standby status: no candidate on trial');
# every pilot says why it does nothing: the server is a standby (not
# "starting: no window measured yet", as if it waited for a window)
is($standby->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status'),
	'standby: no trials during recovery', 'standby status: pilot_reason says it is a standby');
is($standby->safe_psql('postgres', q{
	SELECT string_agg(pilot || ': ' || state || ', ' || reason, E'\n' ORDER BY pilot)
	  FROM walpilot.pilots}),
	"checkpoint_flush_after: idle, standby: no trials during recovery\n"
	  . "commit_delay: idle, standby: no trials during recovery",
	'walpilot.pilots: every pilot is idle and says it is on a standby');

# primary load, replayed, and three seconds the worker closed after it:
# no trial, no decision, no setting change
$primary->safe_psql('postgres',
	"INSERT INTO t SELECT g, repeat('y', 200) FROM generate_series(1, 50000) g");
$primary->wait_for_catchup($standby);
my $replayed = $standby->safe_psql('postgres', 'SELECT now()');
ok($standby->poll_query_until('postgres',
		"SELECT count(*) >= 3 FROM walpilot.timeline WHERE ts > '$replayed'"),
	'the worker closes seconds after the load is replayed');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM walpilot.decisions'),
	'0', 'no decision is taken on the standby');
is(slurp_file($standby->data_dir . '/postgresql.auto.conf'), $auto_conf,
	'postgresql.auto.conf is untouched');
is($standby->safe_psql('postgres', q{
	SELECT count(*) FROM pg_settings
	 WHERE name IN ('commit_delay', 'commit_siblings') AND source <> 'default'}),
	'0', 'commit_delay and commit_siblings keep their defaults');
like(slurp_file($standby->logfile),
	qr/walpilot worker observes only: the server is a standby/,
	'the log says the worker observes only');

# ---- restartpoints ----
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');
ok($standby->poll_query_until('postgres', q{
	SELECT count(*) >= 1 FROM walpilot.checkpoints
	 WHERE finished_at IS NOT NULL AND buffers_written IS NOT NULL
	   AND reason = 'requested'}),
	'a restartpoint is recorded from its log lines');
like(slurp_file($standby->logfile), qr/LOG:  restartpoint complete/,
	'the standby logged a restartpoint');

# ---- promotion: the pilot runs from then on ----
$standby->promote;
ok($standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
	'the standby is promoted');
ok($standby->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'walpilot worker' AND query = 'walpilot worker'}),
	'after promotion the worker no longer says observe only');
like(slurp_file($standby->logfile), qr/walpilot worker: the server was promoted/,
	'the promotion is logged');
is($standby->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'),
	'1', 'the same worker carries on after promotion');
ok($standby->poll_query_until('postgres', q{
	SELECT bool_and(reason NOT LIKE 'standby%') AND
	       (SELECT pilot_reason NOT LIKE 'standby%' FROM walpilot.status)
	  FROM walpilot.pilots}),
	'after promotion no pilot says it is on a standby');

$standby->stop;
$primary->stop;
done_testing();
