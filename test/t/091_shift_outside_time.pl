# A load that changes what its committers do between commits, not how
# many they are: the same 8 clients, first inserting as fast as they can,
# then each pausing 3 ms in its client before every insert.  The flush
# time, the committers and the commits per flush stay where they were, so
# those contexts never notice; the committers' time outside the commit,
# which no arm changes, moves x3 or more, and the choice kept for the old
# load is searched again (the day's morning-to-peak step was such a change:
# more work per transaction, the same count of clients).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = shift_trial_node('outside');

sub decisions { return decision_rows($node, 'commit_delay'); }

my $load = start_insert_load($node, 8, 900);
ok(pilot_state_within($node, 'commit_delay', 'hold', 300),
	'premise: a commit_delay search ends under 8 clients')
  or diag(decisions());
is(first_decision($node, 'commit_delay', 'new search%'), '',
	'premise: no new search yet');

# the same 8 clients, each pausing in its client before every insert; the
# new ones connect before the old ones go
my $paused = start_script_load($node,
	"\\sleep 3 ms\nINSERT INTO t (v) VALUES (1);\n", 8, 900);
$load->kill_kill;

ok(decision_within($node, 'commit_delay', 'new search%', 90),
	'a new search follows within 90 s (walpilot.tune_interval is an hour)')
  or diag(decisions());
my $row = first_decision($node, 'commit_delay', 'new search%');
note($row);
like($row,
	qr/committers' outside time \(us\) moved from \d+\.\d( at the search's start)? to \d+\.\d/,
	'its row says the committers\' time outside the commit moved')
  or diag(decisions());
my $ev = $node->safe_psql('postgres', q{
	SELECT (evidence->>'outside_us')::float8 > 2500
	  FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'new search%'
	 ORDER BY decided_at LIMIT 1});
is($ev, 't', '... and its evidence has the new outside time (over 2.5 ms)')
  or diag(decisions());

$paused->kill_kill;
$node->stop;
done_testing();
