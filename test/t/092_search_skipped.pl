# A periodic search the model rules out is skipped.  8 clients on an
# emulated 20 ms flush, each pausing 1-100 ms (uniform, in pgbench) after
# every insert: their commits arrive spread far beyond the gather's cap, so
# grouping gives about what PostgreSQL's own flushes give, and tune's first
# search finds nothing (its first trial, gather, grades the model).  Every
# walpilot.tune_interval after that the search would run again and lose
# again; the model, raised by its own error on that graded trial, predicts
# under the gain a candidate must win by, so the search is skipped with a
# decision row that says so, and the configured setting stays.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = emulated_node('skip', 'hdd,flush_us=20000', qq{
walpilot.mode = 'tune'
walpilot.tune_checkpoint_flush = off
walpilot.tune_interval = '30s'
autovacuum = off
});
my $load = start_script_load($node,
	"\\set pause random(1, 100)\nINSERT INTO t (v) VALUES (1);\n\\sleep :pause ms\n",
	8, 900);

sub decisions { return decision_rows($node, 'commit_delay'); }

ok(decision_within($node, 'commit_delay', 'periodic search skipped:%', 360),
	'a periodic search is skipped')
  or diag(decisions());
my $row = first_decision($node, 'commit_delay', 'periodic search skipped:%');
note($row);
like($row,
	qr/the model predicts x0\.\d\d for its first trial, x\d\.\d\d with its mean error on \d+ graded trials? here, under the x1\.03 a candidate must win by/,
	'its row gives the prediction, its error, and the gain a candidate needs');
my ($gain, $trials, $error) = split /\|/, $node->safe_psql('postgres', q{
	SELECT evidence ->> 'predicted_gain', evidence ->> 'model_trials',
	       evidence ->> 'model_error'
	  FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'periodic search skipped:%'
	 ORDER BY decided_at LIMIT 1});
cmp_ok($trials || 0, '>=', 1, "its evidence: $trials graded trial(s) ...");
ok(($gain || 0) > 0 && $gain * (1 + $error) < 1.03,
	"... and x$gain raised by the error $error stays under x1.03");
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'trial:%'
	   AND outcome LIKE 'kept%'}), '0',
	'premise: the first search kept nothing');

# the next walpilot.tune_interval: skipped again, no trial in between
ok(poll_for($node, q{
	SELECT count(*) >= 2 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'periodic search skipped:%'}, 90),
	'the next periodic search is skipped too')
  or diag(decisions());
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions
	 WHERE setting = 'commit_delay'
	   AND (reason LIKE 'trial:%' OR reason LIKE 'new search%')
	   AND decided_at > (SELECT coalesce(min(decided_at), '-infinity')
	                       FROM walpilot.decisions
	                      WHERE reason LIKE 'periodic search skipped:%')}), '0',
	'no trial ran between the skips') or diag(decisions());
is($node->safe_psql('postgres', q{
	SELECT effective_value FROM walpilot.settings WHERE name = 'commit_delay'}),
	'0', 'the configured commit_delay stays in force');
like($node->safe_psql('postgres', q{
	SELECT reason FROM walpilot.pilots WHERE pilot = 'commit_delay'}),
	qr/^holding .*no candidate beat it/, 'the pilot holds the configured setting');

$load->kill_kill;
$node->stop;
done_testing();
