# walpilot.commit_groups: why each commit-led WAL flush closed its group.
# On an emulated 8 ms flush: with gather kept by the pilot (tune mode, 4
# clients) most groups close by count and carry more than one commit;
# with a static commit_delay and commit_siblings pinned by the DBA the
# sleeps run out; with one client no delay is taken.  In every window the
# flushing reasons' groups agree with the commit-led flushes the timeline
# counted and with the WAL syncs of pg_stat_wal (pg_stat_io from 18): only
# durable commits run, the WAL writer sleeps and no checkpoint comes.
# walpilot-test: alone (gather must keep its groups, which timing decides)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

my $node = emulated_node('groups', 'hdd', q{
walpilot.mode = 'tune'
max_connections = 40
autovacuum = off
wal_writer_delay = '10s'
checkpoint_timeout = '1h'
max_wal_size = '4GB'
});
my $v18 = $node->safe_psql('postgres', 'SHOW server_version_num') >= 180000;
# every WAL sync of the server: commit-led, the WAL writer's, checkpoints'
my $wal_syncs = $v18
  ? q{SELECT sum(fsyncs)::bigint FROM pg_stat_io WHERE object = 'wal'}
  : q{SELECT wal_sync FROM pg_stat_wal};
my $flushing = q{reason IN ('count_reached', 'delay_expired', 'woken_early', 'no_delay')};

# the view as "reason groups commits size wait" lines, for diagnostics
sub groups_text
{
	return $node->safe_psql('postgres', q{
SELECT string_agg(concat_ws(' ', reason, groups, commits,
                            round(avg_group_size::numeric, 2),
                            round(avg_wait_us::numeric)), E'\n')
  FROM walpilot.commit_groups});
}

# One measured window: reset while nothing commits, then a pgbench insert
# load of $clients for $secs to its end, then until the timeline has closed
# every second of it.  Returns {reason => [groups, commits, size, wait]} and
# checks that the flushing groups agree with the timeline and pg_stat_wal.
sub measure
{
	my ($what, $clients, $secs) = @_;
	$node->safe_psql('postgres', 'SELECT walpilot.reset()');
	my $syncs0 = $node->safe_psql('postgres', $wal_syncs);
	my $load = start_insert_load($node, $clients, $secs);
	$load->finish;
	# the backends reported their WAL statistics when they exited; the
	# worker closes a second after it ends
	my $groups_sum = qq{SELECT sum(groups) FROM walpilot.commit_groups WHERE $flushing};
	my $tl_sum = q{SELECT coalesce(sum(groups_count_reached + groups_delay_expired
	                           + groups_woken_early + groups_no_delay), 0)
	                 FROM walpilot.timeline};
	wait_until("$what: the timeline holds every group of the window", 15,
		sub {
			# within 1 % (at least 2): a group filed in the second that
			# straddles walpilot.reset() lands on either side of it
			$node->safe_psql('postgres',
				"SELECT abs(($tl_sum) - ($groups_sum)) <= greatest(2, 0.01 * ($groups_sum))") eq 't';
		});
	my ($groups, $tl_flushes, $tl_groups, $durable) = split /\|/,
	  $node->safe_psql('postgres', qq{
SELECT ($groups_sum), (SELECT sum(wal_flushes) FROM walpilot.timeline), ($tl_sum),
       (SELECT commits_timed FROM walpilot.status)});
	my $syncs = $node->safe_psql('postgres', $wal_syncs) - $syncs0;
	my %rows;
	for my $line (split /\n/, $node->safe_psql('postgres',
			q{SELECT reason, groups, commits, coalesce(avg_group_size, 0),
			         coalesce(avg_wait_us, -1) FROM walpilot.commit_groups}))
	{
		my ($r, @v) = split /\|/, $line;
		$rows{$r} = \@v;
	}
	diag("$what: flushing groups $groups, timeline wal_flushes $tl_flushes, "
		  . "WAL syncs $syncs, durable commits $durable\n" . groups_text());
	cmp_ok($groups, '>=', 100, "$what: the window has groups to count ($groups)");
	cmp_ok(abs($groups - $tl_flushes), '<=', 0.05 * $tl_flushes,
		"$what: flushing groups $groups agree with the timeline's commit-led flushes $tl_flushes");
	cmp_ok(abs($groups - $syncs), '<=', 0.05 * $syncs,
		"$what: flushing groups $groups agree with the WAL syncs $syncs");
	my $commits = 0;
	$commits += $rows{$_}[1]
	  for qw(count_reached delay_expired woken_early no_delay);
	cmp_ok(abs($commits - $durable), '<=', 0.01 * $durable + 2,
		"$what: the groups hold every durable commit ($commits of $durable)");
	cmp_ok(abs($rows{follower}[1] - ($durable - $groups)), '<=', 2,
		"$what: followers ($rows{follower}[1]) are the durable commits that led no flush");
	return \%rows;
}

#
# gather, as the pilot keeps it: 4 cheap inserting clients all commit
# within one 8 ms flush (031_pilot_saturated)
#
my $search = start_insert_load($node, 4, 300);
ok(poll_for($node,
		q{SELECT pilot_state = 'hold' AND pilot_setting LIKE 'gather%' FROM walpilot.status}, 240),
	'the pilot keeps gather on a flush-bound load')
  or diag($node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', old_value, new_value, outcome), E'\n' ORDER BY decided_at) FROM walpilot.decisions}));
$search->kill_kill;
$search->finish;

my $g = measure('gather', 4, 12);
my ($cr, $all) = (0, 0);
$all += $g->{$_}[0] for qw(count_reached delay_expired woken_early no_delay);
$cr = $g->{count_reached}[0];
cmp_ok($cr, '>=', 0.6 * $all, "gather: most groups close by count ($cr of $all)");
cmp_ok($g->{count_reached}[2], '>', 1.5,
	"gather: a group closed by count carries more than one commit ($g->{count_reached}[2])");
cmp_ok($g->{count_reached}[3], '>', 0,
	"gather: the leader slept until the group was complete ($g->{count_reached}[3] us)");
my $report = $node->safe_psql('postgres', 'SELECT walpilot.report()');
like($report, qr/group commit +gather: \d+ % of groups closed by count, [\d.]+ commits per flush/,
	'report() says gather closes the groups by count');

#
# the DBA's static delay: 2 ms, siblings 1; gather stays out of it
#
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET commit_delay = 2000; ALTER SYSTEM SET commit_siblings = 1; SELECT pg_reload_conf()});
ok(poll_for($node, q{SELECT managed_by = 'dba' FROM walpilot.settings WHERE name = 'commit_delay'}, 30),
	'static: the DBA owns commit_delay');
my $s = measure('static', 4, 10);
$all = 0;
$all += $s->{$_}[0] for qw(count_reached delay_expired woken_early no_delay);
cmp_ok($s->{delay_expired}[0], '>=', 0.6 * $all,
	"static: most sleeps run out ($s->{delay_expired}[0] of $all)");
is($s->{count_reached}[0], 0, 'static: no group closes by count without gather');
cmp_ok(abs($s->{delay_expired}[3] - 2000), '<', 1,
	"static: a sleep that ran out waited the whole commit_delay ($s->{delay_expired}[3] us)");
$report = $node->safe_psql('postgres', 'SELECT walpilot.report()');
like($report, qr/group commit +static delay: \d+ % of sleeps ran out/,
	'report() says the static delay sleeps run out');

#
# one client: nobody else has an xid, so commit_siblings 1 is never met
#
my $o = measure('one client', 1, 8);
$all = 0;
$all += $o->{$_}[0] for qw(count_reached delay_expired woken_early no_delay);
cmp_ok($o->{no_delay}[0], '>=', 0.9 * $all,
	"one client: the flushes take no delay ($o->{no_delay}[0] of $all)");
is($o->{no_delay}[2], '1', 'one client: each group is the leader alone');
is($o->{no_delay}[3], '0', 'one client: no wait without a delay');

$node->stop;
done_testing();
