# The commit-path model counts as committers only the backends that cycle
# through durable commits.  2 insert clients on an emulated 20 ms flush,
# and beside them two sessions that commit once every 1.2 s each
# (monitoring jobs writing a row, say; autovacuum is another): the model
# still counts 2 committers and predicts that grouping the 2 clients'
# commits pays.  Counted as committers, the lone commits made the model
# spread the clients' commits over their outside time (measured: 3.7
# committers, x0.89, nothing to win).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = emulated_node('rare', 'hdd,flush_us=20000', qq{
walpilot.mode = 'observe'
walpilot.tune_checkpoint_flush = off
autovacuum = off
});
$node->safe_psql('postgres', 'CREATE TABLE rare (i int)');

# each commits, then sleeps in its client: idle in between, as a job is
my $rare = start_script_load($node,
	"INSERT INTO rare VALUES (1);\n\\sleep 1200 ms\n", 2, 600, 2);
my $load = start_insert_load($node, 2, 600);

# the model's window (60 s) holds nothing from before both ran
poll_until('the lone commits go on beside the clients for 20 s', 60,
	sub { $node->safe_psql('postgres', 'SELECT count(*) FROM rare') >= 32 });
my $prediction;
ok(poll_for($node, q{
	SELECT walpilot.prediction() ->> 'verdict' <> 'no evidence'
	   AND (walpilot.prediction() ->> 'seconds')::int >= 10}, 90),
	'the 2 clients are flush-bound long enough for a prediction')
  or diag($node->safe_psql('postgres', 'SELECT walpilot.prediction()'));
$prediction = $node->safe_psql('postgres', 'SELECT walpilot.prediction()');
note("the prediction: $prediction");
my ($verdict, $g, $gain) = split /\|/, $node->safe_psql('postgres', q{
	SELECT p ->> 'verdict', p ->> 'committers', p ->> 'predicted_gain'
	  FROM walpilot.prediction() AS p});
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM rare'), '>=', 32,
	'the lone commits went on meanwhile');
cmp_ok($g, '<=', 2.3, "2 committers, the lone commits are none ($g)")
  or diag($prediction);
cmp_ok($g, '>=', 1.7, "both clients are ($g)") or diag($prediction);
is($verdict, 'tune would win', 'grouping the 2 clients\' commits pays')
  or diag($prediction);
cmp_ok($gain // 0, '>=', 1.10, "the predicted gain is 1.10 or more ($gain)");

$load->kill_kill;
$rare->kill_kill;
$node->stop;
done_testing();
