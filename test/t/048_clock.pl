# A wall-clock jump, forward by an hour and back again, under a write
# load.  Without privileges the clock can only be moved for the server's
# processes: libfaketime (LD_PRELOAD, its offset re-read from a file)
# shifts CLOCK_REALTIME/gettimeofday and leaves CLOCK_MONOTONIC alone.
# The server and worker must survive; intervals measured on a monotonic
# clock are not disturbed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;
use IPC::Run;

my ($faketime) = grep { -f $_ } glob('/usr/lib/*/faketime/libfaketime.so.1');
plan skip_all => 'libfaketime not installed (apt-get install libfaketime)'
  unless defined $faketime;

my $node = walpilot_node('clock', 'max_connections = 40');
my $offset_file = $node->basedir . '/faketime';
sub set_offset
{
	my ($offset) = @_;
	open my $fh, '>', $offset_file or die;
	print $fh "$offset\n";
	close $fh;
}
set_offset('+0');
{
	local $ENV{LD_PRELOAD} = $faketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $offset_file;
	local $ENV{FAKETIME_CACHE_DURATION} = 1;
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = 1;
	local $ENV{FAKETIME_DONT_RESET} = 1;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (v int)');
my $script = $node->basedir . '/insert.sql';
open my $fh, '>', $script or die;
print $fh "INSERT INTO t VALUES (1);\n";
close $fh;
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', 2, '-j', 1, '-T', 20,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
sleep 3;
my $status = q{SELECT ticks || '|' || missed_ticks || '|' || commits_timed || '|'
	|| extract(epoch FROM now())::bigint FROM walpilot.status};
my ($t0, $m0, $c0, $now0) = split /\|/, $node->safe_psql('postgres', $status);

set_offset('+3600');
sleep 4;
my ($t1, $m1, $c1, $now1) = split /\|/, $node->safe_psql('postgres', $status);
cmp_ok($now1 - $now0, '>=', 3600, 'the server\'s wall clock jumped an hour forward');
set_offset('+0');
sleep 4;
my ($t2, $m2, $c2, $now2) = split /\|/, $node->safe_psql('postgres', $status);
cmp_ok($now2 - $now1, '<=', -3000, 'and back again');
$load->finish;

my $pm = $node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_activity WHERE backend_type = \'walpilot worker\'');
is($pm, '1', 'the worker survived both jumps');
unlike(slurp_file($node->logfile), qr/PANIC|was terminated by signal|reinitializing/,
	'no crash');
cmp_ok($t1 - $t0, '>=', 100, 'the worker ticked on after the forward jump (' . ($t1 - $t0) . ' in 4 s)');
cmp_ok($t2 - $t1, '>=', 100, 'the worker ticked on after the backward jump (' . ($t2 - $t1) . ' in 4 s)');
cmp_ok($c2, '>', $c1, 'commits are timed after the jumps');
like($out, qr/number of failed transactions: 0 /, 'the load never failed');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.timeline
	 WHERE commits < 0 OR samples < 0 OR missed_ticks < 0 OR wal_bytes < 0 OR commit_max_us < 0}),
	'0', 'no negative value in the timeline');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM walpilot.timeline'),
	'<=', 3600, 'the timeline is bounded by history_size');
cmp_ok($m2 - $m0, '<=', 50, 'a clock jump is not counted as missed ticks (' . ($m2 - $m0) . ')');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.commit_latency
	 WHERE bucket_lower_us >= 1000000 AND commits > 0}),
	'0', 'no commit is timed as a second or longer because of the jump');

$node->stop;
done_testing();
