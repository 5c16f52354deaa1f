# A load that changes while a commit_delay search runs: the search's trials
# compared their arms under a load that is gone when it ends, and the
# hold's first window already sees the new one, so comparing the hold with
# that window alone never notices.  The committers, which no arm changes,
# are also compared with the search's start: 4 clients when it began, 16
# when it ended, and a new search follows at once and says why.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = shift_trial_node('changed');

sub decisions { return decision_rows($node, 'commit_delay'); }

my $load = start_insert_load($node, 4, 600);
ok(pilot_state_within($node, 'commit_delay', 'trial', 240),
	'premise: a commit_delay search starts under 4 clients')
  or diag(decisions());

# 12 more clients while its first trial runs
my $more = start_insert_load($node, 12, 600);
ok(pilot_state_within($node, 'commit_delay', 'hold', 180),
	'the search ends under 16 clients')
  or diag(decisions());

ok(decision_within($node, 'commit_delay', 'new search%', 60),
	'a new search follows within a minute (walpilot.tune_interval is an hour)')
  or diag(decisions());
like(first_decision($node, 'commit_delay', 'new search%'),
	qr/committers moved from [3-5]\.\d at the search's start to 1\d\.\d/,
	'its row says the committers moved since the search began')
  or diag(decisions());

$more->kill_kill;
$load->kill_kill;
$node->stop;
done_testing();
