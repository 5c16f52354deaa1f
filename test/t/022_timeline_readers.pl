# walpilot.timeline without a lock: many readers and walpilot.reset()
# running against the worker's appends.  Readers get whole, ordered
# seconds, a reset empties the ring, and the worker keeps its cadence.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('timeline_readers', conf => qq{
shared_preload_libraries = 'walpilot'
walpilot.history_size = 86400
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
ok($node->poll_query_until('postgres',
		'SELECT count(*) >= 3 FROM walpilot.timeline'),
	'the timeline fills');

# 8 readers of every per-second view, one of them also resetting.
my $dir = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$dir/read.sql") or die;
print $fh "SELECT count(*), min(ts), max(ts) FROM walpilot.timeline;\n";
# each reader also checks the seconds in the order walpilot returns them,
# mid-append and mid-reset: one out of order divides by zero, and the
# reader's error fails the run
print $fh "SELECT 1 / (count(*) = 0)::int FROM (SELECT ts, lag(ts) OVER (ORDER BY ordinality) AS prev FROM walpilot.timeline_data_0_2() WITH ORDINALITY) s WHERE ts <= prev;\n";
print $fh "SELECT count(*) FROM walpilot.wait_profile;\n";
print $fh "SELECT count(*) FROM walpilot.commit_latency;\n";
close($fh);
# resets a few times a second, not back to back (the pause is part of the
# load, not a wait)
open($fh, '>', "$dir/reset.sql") or die;
print $fh "SELECT walpilot.reset();\n\\sleep 300 ms\n";
close($fh);

my $ticks0 = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', '8', '-T', '6', '-f', "$dir/read.sql\@20",
	  '-f', "$dir/reset.sql\@1", '-h', $node->host, '-p', $node->port,
	  'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'readers and resets ran without an error') or diag($err);
# a client that hits an error is aborted, and the summary is printed all
# the same
like($out, qr/^number of transactions actually processed: [1-9]\d*$/m,
	'pgbench processed transactions');
like($out, qr/^number of failed transactions: 0 \(/m,
	'no transaction failed') or diag($out);
unlike($err, qr/aborted|error/i, 'no client was aborted') or diag($err);
my $ticks1 = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
cmp_ok($ticks1 - $ticks0, '>=', 100,
	"the worker kept ticking under the readers (" . ($ticks1 - $ticks0) . " ticks in 6 s)");

# Whole seconds in order, in the order walpilot returns them (ORDER BY ts
# would sort them first), nothing from before the last reset.
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM (SELECT ts, lag(ts) OVER (ORDER BY ordinality) AS prev
	                        FROM walpilot.timeline_data_0_2() WITH ORDINALITY) s
	 WHERE prev IS NOT NULL AND ts <= prev}),
	'0', 'timeline seconds strictly increase');
$node->safe_psql('postgres', 'SELECT walpilot.reset()');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.timeline'),
	'<=', 1, 'a reset empties the timeline (at most the second closing now)');
ok($node->poll_query_until('postgres',
		'SELECT count(*) >= 2 FROM walpilot.timeline'),
	'the timeline fills again after a reset');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.timeline
	 WHERE ts < (SELECT stats_reset_at FROM walpilot.status) - interval '1 s'}),
	'0', 'no second from before the reset comes back');

$node->stop;
done_testing();
