# The commit-path model and the gather's cap.  8 clients on an emulated
# 20 ms flush, each pausing 1-60 ms (uniform, in pgbench) after every
# insert: their commits arrive spread over a time far longer than the
# gather's cap (10 ms), so the cap, not the last arrival, closes every
# group, and grouping can give about what PostgreSQL's own flushes give.
# The model measures how much the pauses vary, says the cap closes the
# group, and predicts about x1 -- not the wait for the slowest of 8
# exponential pauses (it predicted x0.6 that way).  Tune mode's first
# trial (gather against the configured setting) then measures about what
# was predicted (a generous bound: accuracy is a benchmark's business).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = emulated_node('cap', 'hdd,flush_us=20000', qq{
walpilot.mode = 'observe'
walpilot.tune_checkpoint_flush = off
autovacuum = off
});
my $load = start_script_load($node,
	"\\set pause random(1, 60)\nINSERT INTO t (v) VALUES (1);\n\\sleep :pause ms\n",
	8, 600);

ok(poll_for($node, q{
	SELECT walpilot.prediction() ->> 'verdict' <> 'no evidence'
	   AND (walpilot.prediction() ->> 'seconds')::int >= 10}, 90),
	'the paused clients are flush-bound long enough for a prediction')
  or diag($node->safe_psql('postgres', 'SELECT walpilot.prediction()'));
my $prediction = $node->safe_psql('postgres', 'SELECT walpilot.prediction()');
note("the prediction: $prediction");
my ($verdict, $gain, $cv, $source, $closed, $cap, $g) =
  split /\|/, $node->safe_psql('postgres', q{
	SELECT p ->> 'verdict', p ->> 'predicted_gain', p ->> 'outside_cv',
	       p ->> 'outside_cv_source', p ->> 'group_closed_by',
	       p ->> 'gather_cap_us', p ->> 'committers'
	  FROM walpilot.prediction() AS p});
cmp_ok($g, '>=', 7, "8 committers ($g)");
is($source, "the committers' gaps between durable commits",
	'the pauses\' spread is measured');
# uniform over 1-60 ms plus the statement: about 0.5
cmp_ok($cv, '>=', 0.3, "their coefficient of variation ($cv) ...");
cmp_ok($cv, '<=', 0.8, '... is a uniform pause\'s');
cmp_ok($cap, '>=', 9000, "the gather's cap is half the flush ($cap us)");
is($closed, 'the cap', 'the cap closes the group') or diag($prediction);
is($verdict, 'nothing to win', 'nothing to win') or diag($prediction);
cmp_ok($gain, '>=', 0.8, "about x1 ($gain) ...") or diag($prediction);
cmp_ok($gain, '<', 1.10, '... under the x1.10 worth tune mode');

$node->safe_psql('postgres',
	q{ALTER SYSTEM SET walpilot.mode = 'tune'; SELECT pg_reload_conf();});
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial:%' AND outcome IS NOT NULL}, 180),
	'tune mode runs its first trial');
my ($graded, $g_pred, $g_meas) = split /\|/, $node->safe_psql('postgres', q{
	SELECT model_trials, predicted_gain, measured_gain
	  FROM walpilot.pilots WHERE pilot = 'commit_delay'});
note('first trial: ' . $node->safe_psql('postgres', q{
	SELECT outcome FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial:%' ORDER BY decided_at LIMIT 1}));
is($graded, '1', 'it graded the model');
cmp_ok(abs(($g_pred || 0) / ($g_meas || 1) - 1), '<=', 0.3,
	"predicted x$g_pred, the trial measured x$g_meas: within 30 %");

$load->kill_kill;
$node->stop;
done_testing();
