# A commit_delay trial does not count a second in which the checkpointer
# synced data files: the WAL flush waits behind those syncs whatever the
# arm, so such a window says nothing about the candidate.  The trial runs
# that arm again and says in its outcome how many windows it skipped.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

# every data file sync of the checkpoint takes at least the 20 ms flush:
# a 10 ms sampler sees the checkpointer in it
my $node = emulated_node('ckptsync', 'hdd,flush_us=20000', qq{
walpilot.mode = 'tune'
walpilot.tune_checkpoint_flush = off
max_connections = 40
});

sub decisions { return decision_rows($node, 'commit_delay'); }

my $load = start_insert_load($node, 8, 600);
ok(poll_for($node, q{
	SELECT state = 'trial' FROM walpilot.pilots WHERE pilot = 'commit_delay'}, 240),
	'premise: a commit_delay trial starts')
  or diag(decisions());

# a checkpoint every 3 s until the first trial has its verdict; the
# inserts leave table t dirty for each one to sync
my $first_trial = q{
	SELECT coalesce(outcome, '') FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial:%'
	 ORDER BY decided_at LIMIT 1};
my $outcome = '';
my $checkpoints = 0;
for (my $i = 0; $i < 40 && $outcome eq ''; $i++)
{
	$node->safe_psql('postgres', 'CHECKPOINT');
	$checkpoints++;
	sleep 3;
	$outcome = $node->safe_psql('postgres', $first_trial);
}
ok(poll_for($node, qq{SELECT ($first_trial) <> ''}, 120),
	'the trial reaches its verdict between the checkpoints')
  or diag(decisions());
$outcome = $node->safe_psql('postgres', $first_trial);
note("$checkpoints checkpoints; outcome: $outcome");
like($outcome, qr/; rule: [^;]+; \d+ windows? skipped$/,
	'the outcome counts the windows it skipped');
my ($skipped) = $outcome =~ /; (\d+) windows? skipped$/;
cmp_ok($skipped // 0, '>=', 1, 'at least one window was skipped');

$load->kill_kill;
$node->stop;
done_testing();
