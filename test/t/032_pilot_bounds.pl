# The commit_delay pilot's bounds: walpilot.commit_delay_max caps every
# delay it sets (0: none at all), and no periodic storage probe runs
# during a trial (it would stall a window and load the device).
# walpilot-test: alone (its trials compare throughput)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

sub decisions
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', old_value, new_value, reason, outcome), E'\n' ORDER BY decided_at) FROM walpilot.decisions});
}

# the largest delay any decision row names (cap or static delay)
my $max_delay = q{SELECT coalesce(max(greatest(
	  (regexp_match(old_value, '(?:cap|delay) (\d+) us'))[1]::int,
	  (regexp_match(new_value, '(?:cap|delay) (\d+) us'))[1]::int)), -1)
	FROM walpilot.decisions};

#
# commit_delay_max = 0: never a delay; then 30 us: never above 30
#
my $node = emulated_node('max', 'hdd',
	"walpilot.mode = 'tune'\nmax_connections = 40\nwalpilot.commit_delay_max = 0");
my $load = start_insert_load($node, 8, 300);
# a load the pilot would engage on (pilot_commit_delay.c: 20 commits/s, a
# 500 us flush, for 3 windows), for 15 s: long enough for a trial to start
ok($node->poll_query_until('postgres', q{
	SELECT (SELECT us_p50 >= 500 FROM walpilot.storage WHERE kind = 'flush_estimate')
	   AND (SELECT count(*) >= 15 FROM walpilot.timeline WHERE commits >= 20)}),
	'commit_delay_max = 0: 15 s of a flush-bound load on a slow flush');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE new_value <> '-'}),
	'0', 'commit_delay_max = 0: no trial and no change under a flush-bound load')
  or diag(decisions($node));
like($node->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status'),
	qr/commit_delay_max = 0/, 'pilot_reason names commit_delay_max = 0');

# Sampled during the trials (and after): what a session's next commit runs
# with, against the pilot's state.
$node->append_conf('postgresql.conf', "walpilot.commit_delay_max = 30\n");
$node->reload;
my $sample = q{SELECT s.pilot_state || '|' || d.effective_value
	FROM walpilot.status s, walpilot.settings d WHERE d.name = 'commit_delay'};
my $trial_ended = q{SELECT count(*) > 0 FROM walpilot.decisions
	WHERE outcome IS NOT NULL AND new_value <> '-'};
my ($max_seen, $in_trial, $trial_value) = (0, 0, 0);
wait_until('commit_delay_max = 30: a trial runs and ends while commit_delay is sampled',
	240, sub {
		my ($state, $v) = split /\|/, $node->safe_psql('postgres', $sample);
		$max_seen = $v if $v > $max_seen;
		if ($state =~ /^(?:trial|re-check)$/)
		{
			$in_trial++;
			$trial_value++ if $v > 0;
		}
		return $trial_value >= 3 && $node->safe_psql('postgres', $trial_ended) eq 't';
	});
cmp_ok($trial_value, '>', 0,
	"commit_delay_max = 30: samples during a trial saw its value ($trial_value of $in_trial)");
cmp_ok($max_seen, '<=', 30, "commit_delay_max = 30: sessions never get more than 30 (at most $max_seen)");
my $named = $node->safe_psql('postgres', $max_delay);
cmp_ok($named, '<=', 30, 'commit_delay_max = 30: no decision names a delay above 30 us')
  or diag(decisions($node));
cmp_ok($named, '>', 0, '... and the trial did name a delay');
$load->kill_kill;
$node->stop;

#
# no periodic probe during a trial (walpilot.probe_interval = 10 s, its
# minimum): one falls due while a trial runs, and runs only after it.
# walpilot.tune_interval = 10 s: re-check trials follow the first search.
#
$node = emulated_node('probe', 'hdd',
	"walpilot.mode = 'tune'\nmax_connections = 40\nwalpilot.probe_interval = 10\nwalpilot.tune_interval = 10");
$load = start_insert_load($node, 8, 200);
# state, candidate, and the last periodic probe (the worker's start before
# the first): the next one is due 10 s after it.  One trial: the same state
# and candidate in two samples in a row.
my $probe_sample = q{SELECT s.pilot_state || ' ' || coalesce(s.pilot_candidate, '') || '|'
	|| extract(epoch FROM coalesce((SELECT measured_at FROM walpilot.storage
	                                 WHERE kind = 'periodic_probe'), s.worker_started_at))
	FROM walpilot.status s};
my ($prev_state, $prev_at) = ('', '');
my ($overdue_in_trial, $probes_in_trial, $probes_after) = (0, 0, 0);
wait_until('a periodic probe falls due during a trial and runs after it', 150, sub {
	my ($state, $at) = split /\|/, $node->safe_psql('postgres', $probe_sample), 2;
	my $in_trial = $state =~ /^(?:trial|re-check) / && $state eq $prev_state;
	if ($in_trial)
	{
		$probes_in_trial++ if $at ne $prev_at;
		# due at $at + 10: still not run a second later
		$overdue_in_trial++ if Time::HiRes::time() > $at + 11;
	}
	elsif ($at ne $prev_at && $prev_at ne '' && $overdue_in_trial > 0)
	{
		$probes_after++;
	}
	($prev_state, $prev_at) = ($state, $at);
	return $probes_after > 0;
});
cmp_ok($overdue_in_trial, '>', 0,
	"a periodic probe fell due during a trial ($overdue_in_trial samples overdue)");
is($probes_in_trial, 0, 'no periodic probe ran during a trial');
cmp_ok($probes_after, '>', 0, 'the periodic probe runs outside trials');
$load->kill_kill;
$node->stop;

done_testing();
