# The two pilots never run trials at the same time: a commit_delay trial
# changes the commits a checkpoint window sees, and a checkpoint trial's
# writeback changes the flush time of commit_delay's windows, so each would
# bias the other.  A pilot whose trial is due while the other's runs waits,
# says so in a decision row and in its reason, and starts afterwards.  A
# choice of its own does not wait in force through a shift of the load that
# the other's trial keeps it from answering.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

# slow data writes and a slow flush: both pilots have something to tune;
# short checkpoints and a short re-check interval make their trials meet
my $node = emulated_node('serial', 'hdd,flush_us=20000,bw_mbps=10,wal_bw_mbps=150', qq{
walpilot.mode = 'tune'
walpilot.tune_interval = 10s
checkpoint_timeout = 30s
checkpoint_completion_target = 0.9
max_wal_size = 1GB
log_checkpoints = on
max_connections = 40
});
my $load = start_insert_load($node, 8, 900);

ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial%'}, 480),
	'the checkpoint_flush_after pilot runs a trial');
# From its first moment the trial's status says what runs (its first
# window is a whole checkpoint: the reason of before would stay that long).
ok(poll_for($node, q{
	SELECT state = 'trial' FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'}, 10),
	'the checkpoint_flush_after pilot is in its trial');
like($node->safe_psql('postgres', q{
	SELECT reason FROM walpilot.pilots WHERE pilot = 'checkpoint_flush_after'}),
	qr/^trial: /, '... and its reason says so from the start');
ok(poll_for($node, q{
	SELECT pilot_reason LIKE 'waiting: the checkpoint_flush_after trial runs%'
	  FROM walpilot.status}, 300),
	'commit_delay waits for it: its pilot_reason says so');
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay'
	   AND reason LIKE 'waiting: the checkpoint_flush_after trial runs%'}, 10),
	'... and a decision row');
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND reason LIKE 'trial%'
	   AND outcome IS NOT NULL}, 300),
	'the checkpoint_flush_after trial ends');
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions d
	 WHERE setting = 'commit_delay'
	   AND (reason LIKE 'trial%' OR reason LIKE 're-check%' OR reason LIKE 'new search%')
	   AND decided_at > (SELECT max(decided_at) FROM walpilot.decisions
	                      WHERE setting = 'commit_delay' AND reason LIKE 'waiting:%')}, 120),
	'then the commit_delay trial that waited runs');

# The load shifts (8 -> 24 clients) while a checkpoint_flush_after trial
# runs and commit_delay holds a value of its own: that value was chosen for
# the old load, and the trial that keeps a new search from running may last
# minutes, so the configured setting goes back at once, with a decision row
# (its own search may be paused for that trial: the row says so then; and
# where the shift's last window read as not flush-bound, as one did in CI
# among four test runs, the row says that and the setting goes back too).
ok(poll_for($node, q{
	SELECT (SELECT state = 'trial' FROM walpilot.pilots
	         WHERE pilot = 'checkpoint_flush_after')
	   AND (SELECT state = 'hold' FROM walpilot.pilots WHERE pilot = 'commit_delay')
	   AND (SELECT effective_value <> '0' FROM walpilot.settings
	         WHERE name = 'commit_delay')}, 480),
	'a checkpoint_flush_after trial runs while commit_delay holds a value of its own');
# the new clients connect before the old ones go: no gap of windows with
# few commits, which would read as a load no longer flush-bound
my $more = start_insert_load($node, 24, 300);
$load->kill_kill;
$load = $more;
ok(poll_for($node, q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'commit_delay'
	   AND (reason LIKE 'the load shifted (%) while another pilot''s trial keeps a new search from running: configured setting back%'
	        OR reason LIKE 'the load shifted (%) while the search was paused: configured setting back%'
	        OR reason LIKE 'the load shifted (%) and is no longer flush-bound')},
	60),
	'a load shift during the other trial puts the configured commit_delay back (a decision row)')
  or diag($node->safe_psql('postgres', q{
	SELECT string_agg(concat_ws(' | ', decided_at, setting, old_value, new_value, reason, outcome, evidence), E'\n' ORDER BY decided_at)
	  FROM walpilot.decisions})
	. "\n" . $node->safe_psql('postgres', q{
	SELECT string_agg(concat_ws(' | ', pilot, state, setting, candidate, reason), E'\n') FROM walpilot.pilots}));
ok(poll_for($node, q{
	SELECT effective_value = '0' FROM walpilot.settings WHERE name = 'commit_delay'}, 10),
	'... and commit_delay is the configured 0 again');

# In the server log (one process writes every line, in order): no trial
# starts while the other pilot's trial runs.
$load->kill_kill;
my $log = slurp_file($node->logfile);
my ($running, $overlaps, $trials) = (undef, 0, 0);
my %seen;
while ($log =~ /walpilot trial on (\S+) (starts|ended)/g)
{
	my ($pilot, $what) = ($1, $2);
	if ($what eq 'starts')
	{
		$overlaps++ if defined $running && $running ne $pilot;
		$running = $pilot;
		$trials++;
		$seen{$pilot}++;
	}
	elsif (defined $running && $running eq $pilot)
	{
		$running = undef;
	}
}
is($overlaps, 0, "no trial starts while the other pilot's runs ($trials trials)");
is(scalar(keys %seen), 2, 'trials of both pilots are in the log');

$node->stop;
done_testing();
