# walpilot.report(): plain text for psql on an idle server, a busy one and
# a standby; readable by pg_monitor; the pilot's reason from walpilot.status;
# the checkpoints it counts.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $primary = walpilot_node('report_primary', q{
walpilot.mode = 'observe'
max_connections = 40
max_wal_size = 32MB
min_wal_size = 32MB
}, init => { allows_streaming => 1 });
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (id bigserial, v int);
CREATE ROLE mon LOGIN IN ROLE pg_monitor;
});

my $report = sub {
	my ($node, $user) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', 'SELECT walpilot.report()',
		extra_params => $user ? [ '-U', $user ] : []);
	is($ret, 0, $node->name . ': report() runs' . ($user ? " as $user" : '')) or diag $err;
	return $out;
};

my @sections = ('Commit path', 'Checkpoints', 'Pilot', 'Recommendations',
	'To do more, walpilot would need');

#
# idle
#
$primary->safe_psql('postgres', 'SELECT walpilot.reset()');
# the report needs sampled seconds since the reset to say "no commits"
ok($primary->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.timeline WHERE samples > 0}),
	'idle: the timeline has sampled seconds since the reset');
ok($primary->poll_query_until('postgres',
		q{SELECT pilot_reason LIKE 'observe mode:%' FROM walpilot.status}),
	'idle: the pilot says why it does not tune');
my $idle = $report->($primary);
like($idle, qr/^walpilot report, .*mode observe, primary\)/, 'idle: header names mode and role');
like($idle, qr/^\Q$_\E/m, "idle: section '$_'") for @sections;
like($idle, qr/no commits/, 'idle: says there were no commits');
like($idle, qr/a durable-commit load of at least 20 commits\/s/,
	'idle: says what load it would need to see');
like($idle, qr/walpilot\.mode = 'tune'/, 'idle: says observe mode keeps the pilot from acting');

my $reason = $primary->safe_psql('postgres', 'SELECT pilot_reason FROM walpilot.status');
my ($why) = $idle =~ /^  why: (.*)$/m;
is($why, $reason, "idle: the why line is walpilot.status.pilot_reason ($reason)");

#
# busy: a durable-commit load from 8 clients
#
my $script = $primary->basedir . '/insert.sql';
open my $fh, '>', $script or die;
print $fh "INSERT INTO t (v) VALUES (1);\n";
close $fh;
my ($o, $e);
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', '8', '-j', '2', '-T', '20',
	  '-h', $primary->host, '-p', $primary->port, 'postgres' ],
	'>', \$o, '2>', \$e);
ok($primary->poll_query_until('postgres',
		q{SELECT count(*) >= 5 FROM walpilot.timeline
		   WHERE commits > 0 AND ts > now() - interval '60 s'}),
	'busy: the timeline fills');
# a checkpoint by max_wal_size (32MB): a few WAL segments; it finishes
# before the CHECKPOINT below, which would take its request over
$primary->safe_psql('postgres',
	'INSERT INTO t (v) SELECT 1 FROM generate_series(1, 400000)');
ok($primary->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.checkpoints
	 WHERE reason = 'wal' AND finished_at IS NOT NULL}),
	'busy: a checkpoint by max_wal_size is recorded');
$primary->safe_psql('postgres', 'CHECKPOINT');
my $busy = $report->($primary, 'mon');
like($busy, qr/durable commits\/s +[1-9][\d.]* /, 'busy: commits per second');
like($busy, qr/commit latency +p50 \d+ us, p99 \d+ us/, 'busy: latency p50 and p99');
like($busy, qr/WAL flush +\d+ us \(from \w+\)/, 'busy: the flush time and its source');
like($busy, qr/commits per flush +[\d.]+/, 'busy: commits per flush');
like($busy, qr/flush-cycle limit +N\/F = /, 'busy: how far from the flush-cycle limit');
# the IO event is IO:WALSync up to 16, IO:WalSync from 17
like($busy, qr/client backends' active time since reset \(sampled\): .*IO:W(?:AL|al)Sync [\d.]+ %/,
	'busy: the share of time in each WAL wait');
# the CHECKPOINT counts in the total only; the WAL checkpoint as by max_wal_size
my ($n_all, $n_time, $n_wal) =
  $busy =~ /(\d+) checkpoint\(s\) \((\d+) timed, (\d+) by max_wal_size\)/;
ok(defined $n_wal && $n_wal >= 1,
	'busy: the report counts the checkpoint by max_wal_size (' . ($n_wal // 'no line') . ')');
ok(defined $n_all && $n_all >= $n_time + $n_wal + 1,
	'busy: ... and the CHECKPOINT in the total (' . ($n_all // 'no line') . ')');
$load->finish;

#
# standby
#
$primary->backup('b');
my $standby = new_node('report_standby',
	backup => [ $primary, 'b', has_streaming => 1 ]);
$standby->start;
$primary->wait_for_catchup($standby);
my $sb = $report->($standby);
like($sb, qr/^walpilot report, .*, standby\)/, 'standby: the header says standby');
like($sb, qr/^\Q$_\E/m, "standby: section '$_'") for @sections;
like($sb, qr/a primary: a standby has no commits to time or tune/,
	'standby: says what it would need');
is($standby->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.recommendations WHERE setting LIKE 'commit_%'}),
	'0', 'standby: no commit_delay advice');

$standby->stop;
$primary->stop;
done_testing();
