# Load and counter faults: max_connections = 1000 with hundreds of idle
# connections, pg_stat_reset_shared() and walpilot.reset() over and over
# under a write load and around checkpoints (no delta may go negative),
# and track_wal_io_timing off (no time columns invented).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $idle_clients = 300;
my $node = walpilot_node('load_faults', q{
max_connections = 1000
track_wal_io_timing = off
log_checkpoints = off
log_connections = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (id bigserial, v int)');

sub write_script
{
	my ($name, $body) = @_;
	my $path = $node->basedir . "/$name";
	open my $fh, '>', $path or die;
	print $fh $body;
	close $fh;
	return $path;
}
my $insert = write_script('insert.sql', "INSERT INTO t (v) VALUES (1);\n");
my $idle = write_script('idle.sql', "\\sleep 2 s\nSELECT 1;\n");

# each run's stderr, to show why a run ended early
my %pgbench_err;
sub pgbench
{
	my ($script, $clients, $seconds) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'pgbench', '-n', '-f', $script, '-c', $clients, '-j', 2, '-T', $seconds,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
	$pgbench_err{$h} = \$err;
	return $h;
}

my $negatives = q{
	SELECT (SELECT count(*) FROM walpilot.timeline
	         WHERE samples < 0 OR missed_ticks < 0 OR active_backends < 0 OR cpu_backends < 0
	            OR commits < 0 OR async_commits < 0 OR commit_p50_us < 0 OR commit_max_us < 0
	            OR wal_flushes < 0 OR commits_per_flush < 0 OR wal_bytes < 0 OR wal_records < 0
	            OR wal_fpi < 0 OR wal_buffers_full < 0 OR wal_writes < 0 OR wal_syncs < 0
	            OR wal_write_time_us < 0 OR wal_sync_time_us < 0 OR checkpointer_busy < 0)
	    || '/' || (SELECT count(*) FROM walpilot.commit_latency WHERE commits < 0)
	    || '/' || (SELECT count(*) FROM walpilot.wait_profile WHERE samples < 0 OR seconds < 0)
	    || '/' || (SELECT count(*) FROM walpilot.checkpoints
	                WHERE buffers_written < 0 OR write_ms < 0 OR sync_ms < 0 OR wal_bytes < 0
	                   OR commits < 0 OR stall_seconds < 0)
	    || '/' || (SELECT count(*) FROM walpilot.status
	                WHERE samples_taken < 0 OR missed_ticks < 0 OR commits_timed < 0)};

#
# hundreds of idle connections
#
# for longer than they are needed (killed below): 300 connections to an
# assert-enabled server on a loaded machine take many seconds to open
my $idlers = pgbench($idle, $idle_clients, 180);
ok($node->poll_query_until('postgres',
		"SELECT count(*) >= $idle_clients FROM pg_stat_activity WHERE backend_type = 'client backend'"),
	"$idle_clients idle connections are up")
  or diag("sessions: " . $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
	  . "\npgbench so far: " . (eval { $idlers->pump_nb; 1 } ? '' : 'ended; ')
	  . ${ $pgbench_err{$idlers} });
my $load = pgbench($insert, 2, 12);
my ($t0, $m0, $c0) = split /\|/, $node->safe_psql('postgres',
	'SELECT ticks, missed_ticks, commits_timed FROM walpilot.status');
# a fixed window: the ticks in it are the measurement
sleep 5;
my ($t1, $m1, $c1) = split /\|/, $node->safe_psql('postgres',
	'SELECT ticks, missed_ticks, commits_timed FROM walpilot.status');
cmp_ok($t1 - $t0, '>=', 100, "the worker keeps ticking with $idle_clients connections ("
	  . ($t1 - $t0) . ' ticks in 5 s at 10 ms)');
cmp_ok($m1 - $m0, '<=', ($t1 - $t0) / 2, 'it misses at most half its ticks on a loaded machine ('
	  . ($m1 - $m0) . ' missed)');
cmp_ok($c1 - $c0, '>', 0, 'commits of the writers are timed among the idle sessions');
cmp_ok($node->safe_psql('postgres', q{
	SELECT sum(samples) FROM walpilot.wait_profile
	 WHERE backend_type = 'client backend' AND wait_event_type IN ('Client', 'Timeout', 'Activity')}),
	'>', $idle_clients, 'the idle sessions are sampled');
$load->finish;
$idlers->kill_kill;
is($node->safe_psql('postgres', $negatives), '0/0/0/0/0', 'no negative value with 1000 slots');

#
# resets over and over, mid-run, under a write load and around checkpoints
#
# The targets that reset what walpilot reads: its checkpoint counters are
# pg_stat_bgwriter's up to 16 and pg_stat_checkpointer's from 17; its WAL
# writes and syncs are pg_stat_wal's up to 17 and pg_stat_io's from 18.
my $version = $node->safe_psql('postgres', 'SHOW server_version_num');
my ($ckpt_target, $ckpt_view) = $version >= 170000
  ? ('checkpointer', 'pg_stat_checkpointer') : ('bgwriter', 'pg_stat_bgwriter');
my @wal_targets = $version >= 180000 ? ('wal', 'io') : ('wal');
my $reset_wal = join('', map { "SELECT pg_stat_reset_shared('$_');\n" } @wal_targets);
my $reset_ckpt = "SELECT pg_stat_reset_shared('$ckpt_target');\n";
# every view walpilot reads was reset after $since
my $reset_since = qq{
	SELECT (SELECT stats_reset > '%s' FROM $ckpt_view)
	   AND (SELECT stats_reset > '%s' FROM pg_stat_wal)}
  . ($version >= 180000 ? q{
	   AND (SELECT bool_and(stats_reset > '%s') FROM pg_stat_io WHERE object = 'wal')} : '');
$node->safe_psql('postgres', 'SELECT walpilot.reset()');
$load = pgbench($insert, 4, 15);
foreach my $round (1 .. 5)
{
	my $since = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
	# the pg_sleep()s are part of the pattern: resets in different seconds
	$node->safe_psql('postgres', $reset_wal . $reset_ckpt . q{
		CHECKPOINT;
	} . $reset_ckpt . $reset_wal . q{
		SELECT pg_sleep(0.6);
		SELECT walpilot.reset();
		SELECT pg_sleep(0.6);
	} . $reset_wal);
	is($node->safe_psql('postgres', sprintf($reset_since, ($since) x 3)), 't',
		"round $round: pg_stat_reset_shared() reset " . join(', ', @wal_targets, $ckpt_target));
	is($node->safe_psql('postgres', $negatives), '0/0/0/0/0',
		"round $round: no negative delta after pg_stat_reset_shared() and walpilot.reset()");
}
$load->finish;
# the second of the last reset and the one after it are closed
my $load_end = $node->safe_psql('postgres', 'SELECT now()');
ok($node->poll_query_until('postgres',
		"SELECT max(ts) > '$load_end'::timestamptz + interval '1 s' FROM walpilot.timeline"),
	'the timeline closes the seconds after the load');
is($node->safe_psql('postgres', $negatives), '0/0/0/0/0',
	'no negative delta once the seconds around the resets are closed')
  or diag($node->safe_psql('postgres', q{
	SELECT t::text FROM walpilot.timeline t
	 WHERE samples < 0 OR missed_ticks < 0 OR commits < 0 OR async_commits < 0
	    OR wal_flushes < 0 OR wal_bytes < 0 OR wal_records < 0 OR wal_fpi < 0
	    OR wal_buffers_full < 0 OR wal_writes < 0 OR wal_syncs < 0
	    OR wal_write_time_us < 0 OR wal_sync_time_us < 0 OR commit_p50_us < 0
	    OR commit_max_us < 0 OR active_backends < 0 OR cpu_backends < 0
	    OR commits_per_flush < 0 OR checkpointer_busy < 0}));
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.checkpoints'),
	'>=', 1, "checkpoints are recorded across $ckpt_target-stats resets");
# a few seconds of commits after the last reset (the load above may have
# ended during the rounds on a slow server)
pgbench($insert, 2, 3)->finish;
cmp_ok($node->safe_psql('postgres', 'SELECT commits_timed FROM walpilot.status'),
	'>', 0, 'commit timing goes on after the resets');
cmp_ok($node->safe_psql('postgres', q{
	SELECT max(wal_bytes) FROM walpilot.timeline}), '<', 1024 * 1024 * 1024,
	'no absurd WAL delta (a reset is not a wrap-around)');

#
# track_wal_io_timing off: the time columns are 0 or NULL, never made up
#
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.timeline
	 WHERE coalesce(wal_write_time_us, 0) <> 0 OR coalesce(wal_sync_time_us, 0) <> 0}),
	'0', 'with track_wal_io_timing off no WAL I/O time appears');
isnt($node->safe_psql('postgres', q{
	SELECT coalesce(method, '-') FROM walpilot.storage WHERE kind = 'flush_estimate'}),
	'pg_stat_wal', 'the flush estimate does not claim pg_stat_wal timing');

$node->stop;
done_testing();
