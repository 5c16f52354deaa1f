# A checkpoint_flush_after trial (four checkpoints) gives way to a
# commit_delay search: under a light, paced load only the checkpoint pilot
# has something to try; when the load turns flush-bound, the commit_delay
# pilot waits to start a search, and the checkpoint trial ends at its next
# checkpoint instead of keeping that search waiting for the rest of its
# windows.  The commit_delay search then runs, and the checkpoint pilot
# tries the same candidate again afterwards.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

# slow data writes and a slow flush; short checkpoints
my $node = checkpoint_trial_node('yields');

sub decisions { return decision_rows($node); }

# two clients at 30 commits/s: flushes are busy a fifth of the time, not
# flush-bound; its checkpoints are usable windows
my $light = start_insert_load($node, 2, 900, 2, 30);
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'}, 300),
	'a checkpoint_flush_after trial starts under the light load')
  or diag(decisions());
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial%'}),
	'0', 'premise: no commit_delay trial under the light load');

# 16 clients as fast as they go: flush-bound, the commit_delay pilot
# engages and waits for the checkpoint trial
my $heavy = start_insert_load($node, 16, 600);
$light->kill_kill;
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay'
	   AND reason LIKE 'waiting: the checkpoint_flush_after trial runs, this search starts after it%'}, 120),
	'the commit_delay pilot waits to start a search')
  or diag(decisions());
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'
	   AND outcome IS NOT NULL}, 180),
	'the checkpoint trial ends')
  or diag(decisions());
my ($outcome, $candidate, $ended) = split /\|/, $node->safe_psql('postgres', q{
	SELECT outcome, new_value, decided_at FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'
	 ORDER BY decided_at LIMIT 1});
like($outcome,
	qr/^interrupted after [1-3] of 4 windows: the commit_delay pilot waits to start a search, which goes first; this candidate is tried again after it$/,
	'... at its next checkpoint, before its four windows, for the waiting search')
  or diag(decisions());
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason = 'search paused: the commit_delay pilot waits for a trial, which goes first'}, 10),
	'the checkpoint pilot says its search is paused (a decision row)');
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial:%'}, 120),
	'then the commit_delay search runs')
  or diag(decisions());

# once the commit_delay search is over, the same candidate again
ok(poll_for($node, qq{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial:%'
	   AND decided_at > '$ended' AND new_value = '$candidate'}, 420),
	"the checkpoint pilot tries $candidate again afterwards")
  or diag(decisions());

# the two pilots' trials never overlapped (the server log, in order)
$heavy->kill_kill;
my $log = slurp_file($node->logfile);
my ($running, $overlaps) = (undef, 0);
while ($log =~ /walpilot trial on (\S+) (starts|ended)/g)
{
	if ($2 eq 'starts')
	{
		$overlaps++ if defined $running && $running ne $1;
		$running = $1;
	}
	elsif (defined $running && $running eq $1)
	{
		$running = undef;
	}
}
is($overlaps, 0, "no trial starts while the other pilot's runs");

$node->stop;
done_testing();
