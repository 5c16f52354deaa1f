# A choice that fails its re-check gives way to the configured setting, and
# a shift of the load after that starts a new search at once: the pilot
# holds the configured setting as after a search that found nothing, not
# off for walpilot.tune_interval whatever the load does next.  The flush
# time of the emulated volume changes under the running server: fast
# during the re-check (a delay meant for a 20 ms flush loses there), slow
# again once the configured setting is back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

# the default tune_interval (10 min): only a shift can bring the next search
# within this test
# a 20 ms flush: grouping pays even beside a CI run on an assert-enabled
# build, whose CPU time per commit cut the gain of an 8 ms flush to x1.04
my $node = emulated_node('recheck', 'hdd,flush_us=20000', qq{
walpilot.mode = 'tune'
walpilot.tune_checkpoint_flush = off
max_connections = 40
});

sub decisions { return decision_rows($node, 'commit_delay'); }

# 8 clients on a 20 ms flush: a delay wins and is held
my $load = start_insert_load($node, 8, 900);
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND outcome LIKE 'kept%'}, 240),
	'premise: a delay is kept under the flush-bound load')
  or diag(decisions());

# the first re-check of a new choice comes 120 s after the search
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 're-check:%'}, 240),
	'the held delay is re-checked')
  or diag(decisions());

# the volume turns fast: the held delay only adds to each commit
set_emulated_flush($node, 200);
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 're-check:%'
	   AND outcome LIKE 'configured setting restored%'}, 180),
	'premise: on the fast flush the re-check restores the configured setting')
  or diag(decisions());
my $restored_at = $node->safe_psql('postgres', q{
	SELECT max(decided_at) FROM walpilot.decisions WHERE setting = 'commit_delay'});
like($node->safe_psql('postgres', q{
	SELECT reason FROM walpilot.decisions
	 WHERE setting = 'commit_delay' ORDER BY decided_at DESC LIMIT 1}),
	qr/^a re-check found the configured setting as good: holding it until .* \(walpilot\.tune_interval\), or a new search when the load shifts$/,
	'a decision row says the configured setting is held until a shift or tune_interval')
  or diag(decisions());

# a few windows of the fast flush; then the flush is slow again.  The hold
# sees the flush time move (to the fast flush already, where no delay can
# help: idle, without a hold-off; or back to the slow one: a new search),
# and the pilot searches again under the slow flush.
sleep 4;
set_emulated_flush($node, 0);
ok(poll_for($node, qq{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial:%'
	   AND decided_at > '$restored_at'}, 90),
	'a new search starts within 90 s, not after walpilot.tune_interval')
  or diag(decisions() . "\n" . $node->safe_psql('postgres',
	q{SELECT state || ' | ' || reason FROM walpilot.pilots WHERE pilot = 'commit_delay'}));
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'held off%'}),
	'0', 'no hold-off row');

$load->kill_kill;
$node->stop;
done_testing();
