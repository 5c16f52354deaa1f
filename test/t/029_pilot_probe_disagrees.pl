# The commit_delay pilot believes what the commits wait for when the
# fsync probe disagrees.  Here the probe's file is on a fast device while
# the WAL flushes take an emulated 8 ms, as on a token-bucket volume whose
# few probe flushes find tokens while the commits queue behind the cap:
# the committers' own WAL waits confirm the flush-bound load, and the
# pilot searches instead of holding off for walpilot.tune_interval on
# "flush fast per probe".
# walpilot-test: alone (its pilot's trials compare throughput)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

sub rows
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT string_agg(concat_ws(' | ', reason, evidence, outcome), E'\n' ORDER BY id) FROM walpilot.decisions_data()});
}

# The probe's file is the only one not emulated (pass=walpilot_probe), and
# the WAL directory, where the probe writes, is on tmpfs: its flushes take
# microseconds whatever the machine's disk does (a real disk's flush took
# 596 us once, beside other work, and the premise was gone); the WAL
# flushes are the emulated 8 ms (real_sync=0: no real fdatasync behind).
my $waldir = "/dev/shm/walpilot-029-wal-$$";
END { system('rm', '-rf', $waldir) if defined $waldir; }
my $node = walpilot_node('disagree', "walpilot.mode = 'tune'\nmax_connections = 40",
	init => { extra => [ '--waldir', $waldir ] });
start_emulated($node, 'hdd,real_sync=0,pass=walpilot_probe');
$node->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (id bigserial, v int);
});
my $load = start_insert_load($node, 8, 120);

ok(poll_for($node,
		q{SELECT count(*) > 0 FROM walpilot.decisions
		  WHERE reason LIKE 'trial:%' OR reason LIKE 'held off%'}, 90),
	'the pilot decides within 90 s')
  or diag(rows($node));
my $first = $node->safe_psql('postgres',
	q{SELECT reason || ' | ' || coalesce(evidence->>'confirmed_by', '')
	  FROM walpilot.decisions_data()
	  WHERE reason LIKE 'trial:%' OR reason LIKE 'held off%'
	  ORDER BY id LIMIT 1});
like($first, qr/^trial:/, 'it starts a trial, not a hold-off')
  or diag(rows($node));
like($first, qr/probe p50 \d+ us, but the committers wait on the WAL flush: \d+ %/,
	'the trial row says the probe was fast and the commits confirmed it');
if ($first =~ /probe p50 (\d+) us/)
{
	cmp_ok($1, '<', 400, "the probe really saw the fast disk ($1 us)");
}
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE reason LIKE 'held off%flush fast per probe%'}),
	'0', 'no hold-off on the probe alone');

$load->kill_kill;
$node->stop;
done_testing();
