# walpilot.commit_phases under synchronous replication, on the storage
# emulator: with the standby's disk slow and the primary's fast, most of a
# commit's time is standby_wait; with the primary's disk slow and the
# standby's fast, most of it is wal_flush.  The timeline's
# standby_wait_share says the same per second, and a commit that does not
# wait for the standby (synchronous_commit = local) is in no standby_wait
# row, at 8 and (standby slow) 24 clients.  The bounds are wide: an 8 ms
# flush against a 0.3 ms one.  With
# the standby slow, the pilot in tune mode holds off and says why.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

my $fast = 'flush_us=300,real_sync=0';
my $slow = 'flush_us=8000,real_sync=0';

# observe: the pilot must not change commit_delay under the measurement
my $primary = walpilot_node('primary', q{
walpilot.mode = 'observe'
max_connections = 40
}, init => { allows_streaming => 1 });
start_emulated($primary, $fast);
$primary->safe_psql('postgres',
	'CREATE EXTENSION walpilot; CREATE TABLE t (id bigserial, v int)');
$primary->backup('b');
my $standby = new_node('standby', backup => [ $primary, 'b', has_streaming => 1 ]);
start_emulated($standby, $slow);
$primary->append_conf('postgresql.conf', "synchronous_standby_names = '*'\n");
$primary->reload;
ok(poll_for($primary,
		q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'}),
	'the standby is synchronous');

# the phases over $secs seconds of $clients clients, reset after a 5 s
# warm-up (the standby lags' calibration covers the last 5 s)
sub phases_under_load
{
	my ($secs, $clients) = @_;
	my $load = start_insert_load($primary, $clients, $secs + 5);
	sleep 5;
	$primary->safe_psql('postgres', 'SELECT walpilot.reset()');
	$load->finish;
	my %p;
	for my $row (split /\n/, $primary->safe_psql('postgres',
			q{SELECT phase, commits, total_us, coalesce(p50_us, -1)
			    FROM walpilot.commit_phases}))
	{
		my ($phase, $commits, $total, $p50) = split /\|/, $row;
		$p{$phase} = { commits => $commits, total => $total, p50 => $p50 };
	}
	$p{all} = 0;
	$p{all} += $p{$_}{total} for qw(commit_delay wal_flush standby_wait);
	$p{timed} = $primary->safe_psql('postgres',
		'SELECT commits_timed FROM walpilot.status');
	return \%p;
}

sub share
{
	my ($p, $phase) = @_;
	return $p->{all} > 0 ? $p->{$phase}{total} / $p->{all} : 0;
}

# the timeline's mean standby share over the seconds of the last load
sub timeline_share
{
	return $primary->safe_psql('postgres', q{
		SELECT round(avg(standby_wait_share)::numeric, 2)
		  FROM walpilot.timeline
		 WHERE commits > 0 AND ts > now() - interval '8 s'});
}

# 10 s of load with $slow_node's disk slow: the phase $dominant is most of
# the commit time, with a p50 of the 8 ms flush, nearly every commit waited
# for the standby, and the timeline says the same per second
sub check_split
{
	my ($slow_node, $dominant, $clients) = @_;
	my $p = phases_under_load(10, $clients);
	diag(sprintf('slow %s, %d clients: %d commits; wal_flush %d us (p50 %d), standby_wait %d us (p50 %d) of %d',
			$slow_node, $clients, $p->{timed}, $p->{wal_flush}{total}, $p->{wal_flush}{p50},
			$p->{standby_wait}{total}, $p->{standby_wait}{p50}, $p->{all}));
	cmp_ok($p->{timed}, '>', 100, "commits were timed under the slow $slow_node");
	cmp_ok($p->{standby_wait}{commits}, '>=', 0.9 * $p->{timed},
		'nearly every commit waited for the synchronous standby');
	# walpilot.reset() takes each instrument's baseline in turn while the
	# clients commit: a commit between two of them is in one count and
	# not the other, at most one per client
	cmp_ok(abs($p->{wal_flush}{commits} - $p->{timed}), '<=', $clients,
		'every timed commit has a wal_flush part (but a commit per client across the reset)')
	  or diag("wal_flush commits $p->{wal_flush}{commits}, timed $p->{timed}");
	cmp_ok(share($p, $dominant), '>', 0.6,
		"$dominant is most of the commit time with the $slow_node slow ("
		  . sprintf('%.2f', share($p, $dominant)) . ')');
	cmp_ok($p->{$dominant}{p50}, '>=', 4000,
		"the $dominant p50 reflects the ${slow_node}'s 8 ms flush");
	my $ts = timeline_share();
	if ($dominant eq 'standby_wait')
	{
		cmp_ok($ts, '>', 0.5, "the timeline's standby_wait_share says so per second ($ts)");
	}
	else
	{
		cmp_ok($ts, '<', 0.4, "the timeline's standby_wait_share says so per second ($ts)");
	}
	return;
}

#
# the standby's disk is slow
#
check_split('standby', 'standby_wait', 8);

# Many clients: a standby flush then acknowledges WAL sent over the whole
# flush, and the WAL sender's lag runs from the newest of it; the split
# still holds.
check_split('standby', 'standby_wait', 24);

# a commit that waits only for the local flush is in no standby_wait row
$primary->safe_psql('postgres', 'SELECT walpilot.reset()');
$primary->safe_psql('postgres', q{
	SET synchronous_commit = local;
	INSERT INTO t (v) VALUES (2);
	INSERT INTO t (v) VALUES (3);});
is($primary->safe_psql('postgres',
		q{SELECT (SELECT commits FROM walpilot.commit_phases WHERE phase = 'standby_wait')
		         || ' ' || (SELECT commits FROM walpilot.commit_phases WHERE phase = 'wal_flush')}),
	'0 2', 'synchronous_commit = local: two commits, none waiting for the standby');

#
# the pilot on this primary: the commits' latency is the standby's, so the
# load engages; the confirmation names the standby and holds the pilot
# off, with a decision row, and commit_delay stays as configured
#
$primary->append_conf('postgresql.conf', "walpilot.mode = 'tune'\n");
$primary->reload;
my $load = start_insert_load($primary, 8, 120);
ok(poll_for($primary, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay'
	   AND reason LIKE '%the synchronous standby dominates (standby wait%'
	   AND (evidence ->> 'standby_wait_share')::float8 >= 0.5}, 90),
	'a decision row says the synchronous standby dominates, with its share as evidence');
like($primary->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status'),
	qr/held off until .*: the synchronous standby dominates/,
	'the pilot status gives the standby as the reason');
is($primary->safe_psql('postgres', 'SHOW commit_delay'), '0',
	'commit_delay stays as configured');
like($primary->safe_psql('postgres', 'SELECT walpilot.report()'),
	qr/standby wait +\d+ % of commit time \(walpilot.commit_phases\): the synchronous standby, not the local flush, dominates/,
	'report() says the standby dominates');
$load->kill_kill;
$load->finish;
$primary->append_conf('postgresql.conf', "walpilot.mode = 'observe'\n");

#
# the primary's disk is slow, the standby's fast
#
$standby->stop;
$primary->stop;
start_emulated($primary, $slow);
start_emulated($standby, $fast);
ok(poll_for($primary,
		q{SELECT count(*) = 1 FROM pg_stat_replication WHERE sync_state = 'sync'}),
	'the standby is synchronous again');
check_split('primary', 'wal_flush', 8);

$standby->stop;
$primary->stop;
done_testing();
