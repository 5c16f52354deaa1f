# The commit_delay pilot skips its static-delay candidates when gather, the
# choice in force, already takes nearly every committer into each flush: a
# fixed sleep cannot put more into a flush than everyone, so trying one
# only costs throughput while the trial runs.
# walpilot-test: alone (its trial compares commits per flush)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

# An emulated 8 ms flush and 4 cheap inserting clients: every client has
# committed long before the flush ends, so gather takes all four.
my $node = emulated_node('hdd', 'hdd', "walpilot.mode = 'tune'\nmax_connections = 40");
my $log_start = -s $node->logfile;
my $load = start_insert_load($node, 4, 180);

ok(poll_for($node,
		q{SELECT count(*) > 0 FROM walpilot.decisions
		  WHERE new_value LIKE 'gather%' AND outcome LIKE 'kept%'}, 150),
	'gather is kept on a flush-bound load');
ok(poll_for($node, q{SELECT pilot_state = 'hold' FROM walpilot.status}, 60),
	'the search ends');
my $log = slurp_file($node->logfile, $log_start);
like($log, qr/commit_delay pilot skips the static delays: gather is saturated/,
	'the pilot says it skips the static delays');
if ($log =~ /Gather takes ([\d.]+) commits into each flush with ([\d.]+) backends committing/)
{
	cmp_ok($1, '>=', 0.9 * $2,
		"the skip rests on a saturated gather ($1 per flush, $2 committing)");
}
else
{
	fail('the skip rests on a saturated gather');
}
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE new_value LIKE 'delay %, siblings 1'}),
	'0', 'no static delay is tried after a saturated gather')
  or diag($node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', old_value, new_value, outcome), E'\n' ORDER BY decided_at) FROM walpilot.decisions}));
$load->kill_kill;
$node->stop;

done_testing();
