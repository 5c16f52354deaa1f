# The commit_delay pilot's bounds: walpilot.commit_delay_max caps every
# delay it sets (0: none at all), and no periodic storage probe runs
# during a trial (it would stall a window and load the device).
# walpilot-test: alone (its trials compare throughput)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
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
my $effective = q{SELECT effective_value FROM walpilot.settings WHERE name = 'commit_delay'};

#
# commit_delay_max = 0: never a delay; then 30 us: never above 30
#
my $node = emulated_node('max', 'hdd',
	"walpilot.mode = 'tune'\nmax_connections = 40\nwalpilot.commit_delay_max = 0");
my $load = start_insert_load($node, 8, 300);
my $max_seen = 0;
foreach my $i (1 .. 25)
{
	my $v = $node->safe_psql('postgres', $effective);
	$max_seen = $v if $v =~ /^\d+$/ && $v > $max_seen;
	sleep 1;
}
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE new_value <> '-'}),
	'0', 'commit_delay_max = 0: no trial and no change under a flush-bound load')
  or diag(decisions($node));
is($max_seen, 0, 'commit_delay_max = 0: commit_delay stays 0');
like($node->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status'),
	qr/commit_delay_max = 0/, 'pilot_reason names commit_delay_max = 0');

$node->append_conf('postgresql.conf', "walpilot.commit_delay_max = 30\n");
$node->reload;
ok($node->poll_query_until('postgres',
		q{SELECT count(*) > 0 FROM walpilot.decisions WHERE outcome IS NOT NULL AND new_value <> '-'}),
	'commit_delay_max = 30: the pilot runs a trial');
$max_seen = 0;
foreach my $i (1 .. 10)
{
	my $v = $node->safe_psql('postgres', $effective);
	$max_seen = $v if $v =~ /^\d+$/ && $v > $max_seen;
	sleep 1;
}
my $named = $node->safe_psql('postgres', $max_delay);
cmp_ok($named, '<=', 30, 'commit_delay_max = 30: no decision names a delay above 30 us')
  or diag(decisions($node));
cmp_ok($named, '>', 0, '... and the trial did name a delay');
cmp_ok($max_seen, '<=', 30, 'commit_delay_max = 30: sessions never get more than 30');
$load->kill_kill;
$node->stop;

#
# no periodic probe during a trial (walpilot.probe_interval = 10 s, its minimum)
#
$node = emulated_node('probe', 'hdd',
	"walpilot.mode = 'tune'\nmax_connections = 40\nwalpilot.probe_interval = 10");
$load = start_insert_load($node, 8, 200);
my $sample = q{SELECT s.pilot_state || '|' || coalesce((SELECT extract(epoch FROM measured_at)::text
	FROM walpilot.storage WHERE kind = 'periodic_probe'), '') FROM walpilot.status s};
my ($prev_state, $prev_at) = ('', '');
my ($trial_samples, $probes_in_trial, $probes_outside) = (0, 0, 0);
foreach my $i (1 .. 300)
{
	my ($state, $at) = split /\|/, $node->safe_psql('postgres', $sample), 2;
	$at //= '';
	if ($state =~ /trial|re-check/ && $prev_state =~ /trial|re-check/)
	{
		$trial_samples++;
		$probes_in_trial++ if $at ne $prev_at;
	}
	elsif ($at ne $prev_at)
	{
		$probes_outside++;
	}
	($prev_state, $prev_at) = ($state, $at);
	last if $trial_samples >= 40 && $probes_outside > 1;
	select(undef, undef, undef, 0.2);
}
cmp_ok($trial_samples, '>=', 10, 'trials ran while the periodic probe was due every 10 s');
is($probes_in_trial, 0, 'no periodic probe ran during a trial');
cmp_ok($probes_outside, '>', 0, 'the periodic probe runs outside trials');
$load->kill_kill;
$node->stop;

done_testing();
