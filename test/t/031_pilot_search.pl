# The commit_delay pilot's search rules.  On a 3 ms disk with jitter:
# - the static delays are tried also when gather takes every committer
#   into each flush (it skipped them, and a static delay that ran 14 %
#   faster was never found);
# - every trial's outcome names the rule that decided it;
# - a steady load starts no new search while the choice is held (on this
#   disk the old level rule, commits/s or p50 moved by 35 %, started one);
# - a shift of the committers, 16 -> 32, starts one, and its first row
#   says what moved.
# walpilot-test: alone (its trials compare throughput)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

sub rows
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', decided_at, old_value, new_value, reason, outcome), E'\n' ORDER BY id) FROM walpilot.decisions_data()});
}

my $node = emulated_node('search', 'flush_us=3000,jitter_us=1000,bw_mbps=200',
	"walpilot.mode = 'tune'\nmax_connections = 60");
my $load = start_insert_load($node, 16, 400);

# the search: gather, then the static delays, each with an outcome
ok(poll_for($node,
		q{SELECT pilot_state = 'hold' AND
		         (SELECT count(*) FROM walpilot.decisions WHERE reason LIKE 'trial:%') >= 1
		  FROM walpilot.status}, 180),
	'the search ends in hold')
  or diag(rows($node));
my $statics = $node->safe_psql('postgres',
	q{SELECT count(*) FROM walpilot.decisions
	  WHERE reason LIKE 'trial: delay %, siblings 1 against%'});
cmp_ok($statics, '>=', 1, "static delays are tried ($statics trials)")
  or diag(rows($node));
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions
		  WHERE reason LIKE 'trial:%' AND (outcome IS NULL OR outcome NOT LIKE '%; rule: %')}),
	'0', 'every trial outcome names its rule')
  or diag(rows($node));

# steady load, choice held: no new search for 60 s (not a wait for a
# condition: the count must stay the same through the whole window)
my $searches_before = $node->safe_psql('postgres',
	q{SELECT count(*) FROM walpilot.decisions WHERE reason LIKE 'new search%'});
my $t0 = time;
my $held = 1;
while (time - $t0 < 60)
{
	my $st = $node->safe_psql('postgres',
		q{SELECT pilot_state || ' ' || (SELECT count(*) FROM walpilot.decisions WHERE reason LIKE 'new search%') FROM walpilot.status});
	my ($state, $n) = split / /, $st;
	if ($n != $searches_before)
	{
		$held = 0;
		last;
	}
	select(undef, undef, undef, 1.0);
}
ok($held, 'a steady load starts no new search in 60 s of hold')
  or diag(rows($node));

# 16 more clients: the committers move 16 -> 32, a new search says so
my $more = start_insert_load($node, 16, 200);
ok(poll_for($node,
		q{SELECT count(*) > 0 FROM walpilot.decisions
		  WHERE reason LIKE '%new search%committers moved from%'}, 90),
	'32 clients: a new search starts')
  or diag(rows($node));
like(rows($node), qr/new search[:,] .*committers moved from 1\d\.\d to [23]\d\.\d/,
	'its first row says the committers moved')
  or diag(rows($node));

$more->kill_kill;
$load->kill_kill;
$node->stop;
done_testing();
