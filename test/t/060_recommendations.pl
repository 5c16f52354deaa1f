# walpilot.recommendations: each recommendation appears under the condition
# that justifies it and not without it, and disappears when its evidence
# does.  Two servers on the storage emulator side by side: "tight" (tiny
# max_wal_size and wal_buffers, an fdatasync slower than every other sync
# method) and "roomy" (ample sizes, every method as fast as the others),
# under the same loads.
# Shares the machine: both disks are emulated with real_sync=0, so the real
# disk of a busy shared machine cannot make any sync method slow (it once
# made tight's O_DSYNC writes as slow as its emulated 3 ms fdatasync, and
# the wal_sync_method advice never came).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

sub start_node
{
	my ($name, $storage, $conf) = @_;
	my $node = walpilot_node($name, qq{
walpilot.mode = 'observe'
log_checkpoints = on
max_connections = 40
$conf
});
	start_emulated($node, $storage);
	$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
	my ($o, $e);
	IPC::Run::run([ 'pgbench', '-i', '-s', '5', '-q', '-h', $node->host,
		'-p', $node->port, 'postgres' ], '>', \$o, '2>', \$e)
	  or die "pgbench -i failed: $e";
	return $node;
}

sub pgbench_run
{
	my ($node, $seconds, $options) = @_;
	my ($o, $e);
	local $ENV{PGOPTIONS} = $options // '';
	IPC::Run::run([ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', $seconds,
		'-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$o, '2>', \$e);
	return $o;
}

# the row for one setting: "current|recommended|restart|apply_sql", or ''
sub rec
{
	my ($node, $setting) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT current_value || '|' || recommended_value || '|' || requires_restart
		       || '|' || apply_sql
		  FROM walpilot.recommendations WHERE setting = '$setting'});
}

sub evidence
{
	my ($node, $setting, $key) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT evidence ->> '$key' FROM walpilot.recommendations
		 WHERE setting = '$setting'});
}

my $tight = start_node('tight', 'ssd,fdatasync_us=3000,real_sync=0', q{
max_wal_size = 32MB
min_wal_size = 32MB
wal_buffers = 64kB
});
# roomy's flush is a quarter of the ssd profile's 200 us: with the sleep's
# overshoot and a loaded machine's wake-up delays the probe once measured
# the 200-us flush above the 400-us bar that makes a device slow
my $roomy = start_node('roomy', 'ssd,flush_us=50,real_sync=0', q{
max_wal_size = 4GB
wal_buffers = 128MB
});

for my $node ($tight, $roomy)
{
	$node->safe_psql('postgres', 'SELECT walpilot.reset()');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.recommendations'),
		'0', $node->name . ': idle, no probe: no recommendation');
}

#
# wal_sync_method: from the probe, with both figures
#
$_->safe_psql('postgres', 'SELECT count(*) FROM walpilot.probe(1)') for ($tight, $roomy);
my $sm = rec($tight, 'wal_sync_method');
like($sm, qr/^fdatasync\|(fsync|open_sync|open_datasync)\|false\|/,
	'tight: the probe finds a method faster than the slow fdatasync');
my ($best) = $sm =~ /^fdatasync\|(\w+)\|/;
$best //= 'none';
is((split /\|/, $sm)[3],
	"ALTER SYSTEM SET wal_sync_method = '$best'; SELECT pg_reload_conf();",
	'tight: apply_sql is the exact ALTER SYSTEM and reload');
cmp_ok(evidence($tight, 'wal_sync_method', 'current_1w_p50_us'), '>=', 2500,
	'tight: evidence holds the configured method\'s figure (emulated 3 ms)');
cmp_ok(evidence($tight, 'wal_sync_method', 'recommended_1w_p50_us'), '<', 2000,
	'tight: ... and the recommended method\'s figure');
is(rec($roomy, 'wal_sync_method'), '',
	'roomy: every method equally fast: no wal_sync_method advice');

#
# a write load: max_wal_size (tight) and commit_delay (observe, slow flush)
#
pgbench_run($roomy, 20);
# tight: until the rule has its evidence, two checkpoints by WAL volume of
# at least three quarters of the trigger distance each (a busy machine
# writes less WAL in a fixed time), for at most two minutes
for my $i (1 .. 12)
{
	pgbench_run($tight, 10);
	last if rec($tight, 'max_wal_size') ne '';
}

my $mws = rec($tight, 'max_wal_size');
like($mws, qr/^32MB\|\d+[MG]B\|false\|ALTER SYSTEM SET max_wal_size = '\d+[MG]B'; SELECT pg_reload_conf\(\);$/,
	'tight: checkpoints by max_wal_size under a write load: max_wal_size advice')
  or diag($tight->safe_psql('postgres', q{
	SELECT string_agg(concat_ws(' ', started_at, reason, wal_bytes), E'\n' ORDER BY started_at)
	  FROM walpilot.checkpoints}));
cmp_ok(evidence($tight, 'max_wal_size', 'wal_checkpoints'), '>=', 2,
	'tight: the evidence counts the WAL-triggered checkpoints');
is(rec($roomy, 'max_wal_size'), '', 'roomy: timed checkpoints only: no max_wal_size advice');

like(rec($tight, 'commit_delay'), qr/^0\|[1-9]\d*\|false\|/,
	'tight: flush-bound in observe mode: what the pilot would set for commit_delay');
like(rec($tight, 'commit_siblings'), qr/^5\|1\|false\|/, 'tight: ... and commit_siblings');
cmp_ok(evidence($tight, 'commit_delay', 'flush_us'), '>=', 500,
	'tight: commit_delay advice rests on a slow measured flush');
is(rec($roomy, 'commit_delay'), '', 'roomy: fast flush: no commit_delay advice')
  or diag($roomy->safe_psql('postgres', q{
	SELECT evidence FROM walpilot.recommendations WHERE setting = 'commit_delay'}));

#
# a bulk load: wal_buffers (tight).  In one transaction that idles before
# it commits: a backend publishes its pg_stat_wal counts only outside a
# transaction, so wal_buffers_full arrives seconds after the WAL it
# describes, in seconds that wrote almost none (the advice once dropped
# such seconds' counts, and with them the whole load's).
#
my $bulk_from = $roomy->safe_psql('postgres', 'SELECT now()');
for my $node ($tight, $roomy)
{
	# the table first: under wal_level = minimal, rows inserted in the
	# transaction that created their table are not WAL-logged
	$node->safe_psql('postgres', 'CREATE TABLE bulk (a int, b text)');
	$node->safe_psql('postgres', q{
		BEGIN;
		INSERT INTO bulk SELECT g, repeat('x', 200) FROM generate_series(1, 200000) g;
		SELECT pg_sleep(3);
		COMMIT});
}
ok($tight->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM walpilot.recommendations WHERE setting = 'wal_buffers'}),
	'tight: wal_buffers_full under a bulk load: wal_buffers advice');
like(rec($tight, 'wal_buffers'), qr/^64kB\|\d+[kMG]B\|true\|ALTER SYSTEM SET wal_buffers = '\d+[kMG]B'; -- then restart the server$/,
	'tight: wal_buffers needs a restart, and says so');
# pg_stat_wal counts arrive about a second late: roomy's advice is read
# once its timeline has the bulk load's WAL records (wal_buffers_full comes
# with them)
ok($roomy->poll_query_until('postgres', qq{
	SELECT sum(wal_records) >= 200000 FROM walpilot.timeline
	 WHERE ts >= date_trunc('second', '$bulk_from'::timestamptz)}),
	'roomy: the timeline has the bulk load\'s WAL records');
is(rec($roomy, 'wal_buffers'), '', 'roomy: no full WAL buffers: no wal_buffers advice');

#
# asynchronous commits: wal_writer_flush_after (roomy)
#
$roomy->safe_psql('postgres', 'SELECT walpilot.reset()');
pgbench_run($roomy, 12, '-c synchronous_commit=off');
is(rec($roomy, 'wal_writer_flush_after'), '',
	'roomy: asynchronous commits, WAL writer flushing about once per cycle: no advice');
$roomy->safe_psql('postgres', q{
	ALTER SYSTEM SET wal_writer_flush_after = '8kB'; SELECT pg_reload_conf();
	SELECT walpilot.reset()});
pgbench_run($roomy, 12, '-c synchronous_commit=off');
like(rec($roomy, 'wal_writer_flush_after'), qr/^8kB\|\d+[kM]B\|false\|/,
	'roomy: a tiny wal_writer_flush_after makes the WAL writer sync far more than once per cycle: advice');
cmp_ok(evidence($roomy, 'wal_writer_flush_after', 'syncs_not_led_by_commits_per_s'), '>', 10,
	'roomy: the evidence is the syncs no durable commit led');

#
# walpilot.mode = off measures nothing: no advice, not even from old evidence
#
my $all = q{SELECT string_agg(setting, ',' ORDER BY setting) FROM walpilot.recommendations};
like($tight->safe_psql('postgres', $all), qr/max_wal_size.*wal_sync_method/,
	'tight: the advice so far');
$tight->safe_psql('postgres',
	"ALTER SYSTEM SET walpilot.mode = 'off'; SELECT pg_reload_conf();");
ok($tight->poll_query_until('postgres',
		'SELECT count(*) = 0 FROM walpilot.recommendations'),
	'tight: walpilot.mode = off: no recommendation');
$tight->safe_psql('postgres',
	"ALTER SYSTEM SET walpilot.mode = 'observe'; SELECT pg_reload_conf();");
ok($tight->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM walpilot.recommendations WHERE setting = 'wal_sync_method'}),
	'tight: back in observe mode, the probe\'s advice is back');

#
# each recommendation disappears when its evidence does
#
for my $s ('max_wal_size', 'wal_sync_method')
{
	my $sql = (split /\|/, rec($tight, $s))[3];
	$tight->safe_psql('postgres', $sql);
	ok($tight->poll_query_until('postgres',
			"SELECT count(*) = 0 FROM walpilot.recommendations WHERE setting = '$s'"),
		"tight: $s advice is gone once applied");
}
$tight->safe_psql('postgres',
	"ALTER SYSTEM SET walpilot.mode = 'tune'; SELECT pg_reload_conf();");
ok($tight->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM walpilot.recommendations WHERE setting LIKE 'commit_%'}),
	'tight: in tune mode the pilot decides commit_delay itself: no advice');
$tight->safe_psql('postgres', (split /\|/, rec($tight, 'wal_buffers'))[3]);
$tight->stop;
start_emulated($tight, 'ssd,fdatasync_us=3000');
is(rec($tight, 'wal_buffers'), '', 'tight: after the restart the wal_buffers advice is gone');

$_->stop for ($tight, $roomy);
done_testing();
