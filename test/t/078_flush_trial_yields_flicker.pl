# A checkpoint_flush_after trial gives way to a commit_delay search also
# when that search's load suits it in most seconds but not all (a batch
# job beside the OLTP load): the commit_delay pilot's waiting flag is then
# down at many a moment, and the checkpoint trial, which looks at it once
# per checkpoint, must not take such a moment for "no one waits".  Here the
# flush-bound load runs 4 s of every 10: the commit_delay pilot waits about
# one second in ten, and the checkpoint trial still ends at its first
# checkpoint.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

my $node = checkpoint_trial_node('flicker');

sub decisions { return decision_rows($node); }

# a light, paced load: only the checkpoint pilot has something to try
my $light = start_insert_load($node, 2, 900, 2, 30);
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'}, 300),
	'a checkpoint_flush_after trial starts under the light load')
  or diag(decisions());

# 16 unpaced clients 4 s of every 10, beside the light load, until the
# checkpoint trial ends
my $ended = 0;
my $deadline = time() + 240;
while (!$ended && time() < $deadline)
{
	my $burst = start_insert_load($node, 16, 4);
	sleep(10);
	$burst->kill_kill;
	$ended = $node->safe_psql('postgres', q{
		SELECT count(*) > 0 FROM walpilot.decisions
		 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'
		   AND outcome IS NOT NULL}) eq 't';
}
ok($ended, 'the checkpoint trial ends') or diag(decisions());
ok($node->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay'
	   AND reason LIKE 'waiting: the checkpoint_flush_after trial runs, this search starts after it%'}) eq 't',
	'premise: the commit_delay pilot waited for it to start a search')
  or diag(decisions());
like($node->safe_psql('postgres', q{
	SELECT outcome FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'
	 ORDER BY decided_at LIMIT 1}),
	qr/^interrupted after 1 of 4 windows: the commit_delay pilot waits to start a search/,
	'... at its first checkpoint, though the waiting pilot waits only in some seconds')
  or diag(decisions());
# one row for the wait, not one per burst
cmp_ok($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'waiting:%'}),
	'<=', 2, 'the wait is one decision row (at most two), not one per burst')
  or diag(decisions());

$light->kill_kill;
$node->stop;
done_testing();
