# The commit_delay pilot's decision log and re-engagement: a win is one
# row; every trial ends with an outcome, also one interrupted by revert()
# or the worker's exit; after the load goes and comes back the pilot tunes
# again at once, not after walpilot.tune_interval.
# walpilot-test: alone (its trials compare throughput)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;
use Time::HiRes qw(time);

emulator_shim();

my $node = emulated_node('log', 'hdd',
	"walpilot.mode = 'tune'\nmax_connections = 40");

sub decisions
{
	return $node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', id, old_value, new_value, reason, outcome), E'\n' ORDER BY id) FROM walpilot.decisions_data()});
}

my $trial_rows = q{(reason LIKE 'trial%' OR reason LIKE 're-check%' OR reason LIKE 'new search%')};

#
# a search ends in hold; a win is one row
#
my $load = start_insert_load($node, 8, 600);
ok(poll_for($node, q{SELECT pilot_state = 'hold' FROM walpilot.status}, 120),
	'a flush-bound load: the search ends in hold');
is($node->safe_psql('postgres',
		qq{SELECT count(*) FROM walpilot.decisions WHERE $trial_rows AND outcome IS NULL}),
	'0', 'every trial of the search has an outcome') or diag(decisions());
cmp_ok($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE outcome LIKE 'kept%'}),
	'>=', 1, 'a trial was kept');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions_data() k JOIN walpilot.decisions_data() o
	  ON o.id > k.id AND o.old_value = k.old_value AND o.new_value = k.new_value
	 AND o.outcome IS NULL
	 WHERE k.outcome LIKE 'kept%'}),
	'0', 'a win is one row: no second row repeating the kept change') or diag(decisions());

#
# the load goes and comes back: tuned again at once
#
$load->kill_kill;
ok(poll_for($node, q{SELECT pilot_state = 'idle' FROM walpilot.status}, 60),
	'without load the pilot goes idle');
my $idle_at = time();
$load = start_insert_load($node, 8, 600);
ok(poll_for($node, q{SELECT pilot_state <> 'idle' FROM walpilot.status}, 40),
	'the load comes back: the pilot engages again within 40 s (tune_interval is 600 s)')
  or diag(decisions(), "\n", $node->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status'));

#
# revert() during a trial: the trial ends with an outcome
#
$node->append_conf('postgresql.conf', "walpilot.tune_interval = 10\n");
$node->reload;
ok(poll_for($node, q{SELECT pilot_state IN ('trial', 're-check') FROM walpilot.status}, 120),
	'a trial runs');
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
ok(poll_for($node, qq{SELECT count(*) = 0 FROM walpilot.decisions WHERE $trial_rows AND outcome IS NULL}, 10),
	'revert() during a trial: the trial row gets an outcome') or diag(decisions());
cmp_ok($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE outcome LIKE 'interrupted: walpilot.revert()%'}),
	'>=', 1, 'its outcome says the revert interrupted it');

#
# the worker exits during a trial: the trial ends with an outcome
#
ok(poll_for($node, q{SELECT pilot_state IN ('trial', 're-check') FROM walpilot.status}, 120),
	'after the hold-off a trial runs again');
my $pid = $node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok(poll_for($node, qq{SELECT worker_pid IS NOT NULL AND worker_pid <> $pid FROM walpilot.status}, 60),
	'the worker is restarted');
is($node->safe_psql('postgres',
		qq{SELECT count(*) FROM walpilot.decisions WHERE $trial_rows AND outcome IS NULL}),
	'0', 'worker exit during a trial: every trial row has an outcome') or diag(decisions());
cmp_ok($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE outcome LIKE 'interrupted: walpilot worker exiting%'}),
	'>=', 1, 'its outcome says the worker exit interrupted it');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE reason LIKE 'walpilot worker exiting%' AND old_value = new_value}),
	'0', 'the exit row names a change, not the configured value twice');

$load->kill_kill;
$node->stop;
done_testing();
