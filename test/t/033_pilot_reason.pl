# walpilot.status.pilot_reason: why the pilot is idle or holding, for
# each state -- observe mode, no flush-bound load (with the numbers), a
# hold-off after revert() (by whom, until when; also a decision row and a
# LOG line), a pinned commit_delay, fsync = off, a light load at its own
# pace (the flushes not busy enough) -- and the 0.1 status declaration
# still works.
# walpilot-test: alone (it checks the flush-bound detection's numbers)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();

my $node = emulated_node('reason', 'hdd',
	"walpilot.mode = 'observe'\nmax_connections = 40");

# wait until pilot_reason matches, at most $secs seconds; returns it (the
# last one read when it did not come)
sub reason_like
{
	my ($re, $secs) = @_;
	my $r = '';
	poll_until("pilot_reason matching $re", $secs, sub {
		$r = $node->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status');
		return $r =~ $re;
	});
	return $r;
}

like(reason_like(qr/^observe mode/, 10), qr/^observe mode/,
	'observe mode: the reason says so');

$node->append_conf('postgresql.conf', "walpilot.mode = 'tune'\n");
$node->reload;
like(reason_like(qr/^not flush-bound: .*commits\/s/, 10),
	qr/^not flush-bound: \d+ commits\/s \(needs \d+\)/,
	'tune mode without load: not flush-bound, with the numbers');

my $load = start_insert_load($node, 8, 300);
ok($node->poll_query_until('postgres',
		q{SELECT pilot_state <> 'idle' FROM walpilot.status}),
	'a flush-bound load engages the pilot');
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
like(reason_like(qr/^held off until/, 10),
	qr/^held off until .*walpilot\.revert\(\) by \w+ in database postgres/,
	'after revert(): held off until a time, by whom, where');
is($node->safe_psql('postgres',
		q{SELECT count(*) > 0 FROM walpilot.decisions WHERE reason LIKE 'held off until % walpilot.revert()%'}),
	't', 'the hold-off is a decision row');
like(slurp_file($node->logfile), qr/walpilot decision on commit_delay: "-" -> "-".*\n.*held off until/,
	'the hold-off is a LOG line');

$node->safe_psql('postgres', 'ALTER SYSTEM SET commit_delay = 10');
$node->reload;
like(reason_like(qr/^pinned/, 10),
	qr/^pinned: commit_delay is set in the configuration \(commit_delay = 10,/,
	'commit_delay set by ALTER SYSTEM: pinned, with the value');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET commit_delay');
$node->safe_psql('postgres', 'ALTER SYSTEM SET fsync = off');
$node->reload;
like(reason_like(qr/^fsync = off/, 10), qr/^fsync = off/, 'fsync = off: the reason says so');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET fsync');
$node->reload;
$load->kill_kill;

# the 0.1 declaration of status_data (an extension not yet updated)
$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('old', q{CREATE EXTENSION walpilot VERSION '0.1'});
is($node->safe_psql('old', q{SELECT count(*) FROM walpilot.status WHERE pilot_state IS NOT NULL}),
	'1', 'walpilot.status works under the 0.1 declaration');
$node->safe_psql('old', q{ALTER EXTENSION walpilot UPDATE TO '0.2'});
isnt($node->safe_psql('old', q{SELECT pilot_reason FROM walpilot.status}), '',
	'after ALTER EXTENSION UPDATE it has pilot_reason');

$node->stop;

# A light load that arrives at its own pace, as at night: two clients at
# 60 commits/s in all on a 3 ms disk.  Active (20 commits/s or more), two
# committers, a slow flush -- but the flushes they lead are busy about a
# fifth of the second: no delay can raise its commits/s, so no trial.
my $night = emulated_node('night', 'flush_us=3000,jitter_us=1000,real_sync=0',
	"walpilot.mode = 'tune'");
my $light = start_insert_load($night, 2, 40, 1, 60);
my $r = '';
poll_until('the light load measured', 20, sub {
	$r = $night->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status');
	return $r =~ /flushes busy/;
});
like($r, qr/^not flush-bound: \d+ commits\/s \(needs 20\).*flushes busy (\d+) % of the second \(needs 50\)/,
	'a light paced load: not flush-bound, with the flushes\' busy share');
ok(!poll_for($night, q{SELECT pilot_state <> 'idle' FROM walpilot.status}, 12),
	'the pilot stays idle under it for 12 s (no trial adds its delay)');
is($night->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.decisions WHERE setting = 'commit_delay'}),
	'0', 'no decision about commit_delay');
$light->kill_kill;
$night->stop;
done_testing();
