# A held commit_delay choice is tried again when the load's mix changes,
# not only when its committers or the flush time move: the same 8 clients
# on the same flush turn from bare inserts to transactions with CPU work
# before each insert.  A delay chosen for the first mix can hurt the second
# (longer transactions, longer row-lock holds); the pilot must look again
# at once, not at its next re-check.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

# a 20 ms flush: gather wins under both mixes, so the committers per
# flush stay about the same and only the work between commits moves
my $node = emulated_node('mix', 'hdd,flush_us=20000', qq{
walpilot.mode = 'tune'
walpilot.tune_checkpoint_flush = off
max_connections = 40
});

sub decisions { return decision_rows($node, 'commit_delay'); }

sub pilot_state
{
	return $node->safe_psql('postgres', q{
	SELECT state || ' | ' || reason FROM walpilot.pilots WHERE pilot = 'commit_delay'});
}

# the timeline's last 80 seconds: CPU per commit, committers on CPU
sub cpu_per_commit
{
	return $node->safe_psql('postgres', q{
	SELECT string_agg(to_char(ts, 'HH24:MI:SS') || ' ' ||
	       round((cpu_backends * 1e6 / nullif(commits + async_commits, 0))::numeric) ||
	       ' us/commit, ' || commits || ' commits', E'\n' ORDER BY ts)
	  FROM walpilot.timeline WHERE ts > now() - interval '80 s'});
}

my $load = start_insert_load($node, 8, 900);
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND outcome LIKE 'kept%'}, 240),
	'premise: a delay is kept under the insert load')
  or diag(decisions());
ok(poll_for($node, q{
	SELECT state = 'hold' FROM walpilot.pilots WHERE pilot = 'commit_delay'}, 120),
	'premise: the search is over and the choice is held')
  or diag(decisions() . "\n" . pilot_state());
sleep 8;

# the same clients, each commit now behind a few ms of CPU work
my $swapped_at = $node->safe_psql('postgres', 'SELECT now()');
$load->kill_kill;
my $script = $node->basedir . '/work_then_insert.sql';
open my $fh, '>', $script or die;
print $fh "SELECT count(*) FROM generate_series(1, 20000);\n";
print $fh "INSERT INTO t (v) VALUES (1);\n";
close $fh;
my ($out, $err);
my $heavy = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', 8, '-j', 2, '-T', 600,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);

# well before the first re-check (120 s after the search)
ok(poll_for($node, qq{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'new search:%'
	   AND decided_at > '$swapped_at'}, 60),
	'the change of mix starts a new search within 60 s')
  or diag(decisions() . "\n" . pilot_state() . "\n" . cpu_per_commit());
like($node->safe_psql('postgres', qq{
	SELECT reason FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'new search:%'
	   AND decided_at > '$swapped_at' ORDER BY decided_at LIMIT 1}),
	qr/CPU per commit \(us\) moved from \d+\.\d to \d+\.\d/,
	'its decision row says the CPU per commit moved');
like($node->safe_psql('postgres', qq{
	SELECT evidence->>'cpu_per_commit_us' FROM walpilot.decisions
	 WHERE setting = 'commit_delay' AND reason LIKE 'new search:%'
	   AND decided_at > '$swapped_at' ORDER BY decided_at LIMIT 1}),
	qr/^\d/, 'its evidence has the CPU per commit');

$heavy->kill_kill;
$node->stop;
done_testing();
