# A wall-clock jump, forward by an hour and back again, under a write
# load.  Without privileges the clock can only be moved for the server's
# processes: libfaketime (LD_PRELOAD, its offset re-read from a file)
# shifts CLOCK_REALTIME/gettimeofday and leaves CLOCK_MONOTONIC alone.
# The server and worker must survive; intervals measured on a monotonic
# clock are not disturbed; every second the worker really sampled is one
# timeline row, neither lost nor doubled by the jumps.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;
use IPC::Run;
use Time::HiRes;

my ($faketime) = grep { -f $_ } glob('/usr/lib/*/faketime/libfaketime.so.1');
plan skip_all => 'libfaketime not installed (apt-get install libfaketime)'
  unless defined $faketime;

# history_size: room for the hour a forward step may fill with empty
# seconds (sampler.c: seconds without a tick) besides the sampled ones
my $node = walpilot_node('clock', "max_connections = 40\nwalpilot.history_size = 7200");
my $offset_file = $node->basedir . '/faketime';
sub set_offset
{
	my ($offset) = @_;
	# written aside and renamed into place: a process that re-reads the
	# file between a truncation and the write finds it empty, and
	# libfaketime exits the process on a value it cannot parse (17's
	# postmaster once shut down so)
	open my $fh, '>', "$offset_file.new" or die;
	print $fh "$offset\n";
	close $fh or die;
	rename("$offset_file.new", $offset_file) or die "rename: $!";
}
set_offset('+0');
my $started = Time::HiRes::time();
{
	local $ENV{LD_PRELOAD} = $faketime;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $offset_file;
	local $ENV{FAKETIME_CACHE_DURATION} = 1;
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = 1;
	local $ENV{FAKETIME_DONT_RESET} = 1;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (v int)');
$node->poll_query_until('postgres', 'SELECT ticks > 0 FROM walpilot.status')
  or die 'the worker does not tick';
my $ticking = Time::HiRes::time();
my $script = $node->basedir . '/insert.sql';
open my $fh, '>', $script or die;
print $fh "INSERT INTO t VALUES (1);\n";
close $fh;
my ($out, $err) = ('', '');
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', 2, '-j', 1, '-T', 20,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
ok($node->poll_query_until('postgres', 'SELECT commits_timed > 0 FROM walpilot.status'),
	'the load\'s commits are timed');
my $status = q{SELECT ticks || '|' || missed_ticks || '|' || commits_timed || '|'
	|| extract(epoch FROM now())::bigint FROM walpilot.status};
my ($t0, $m0, $c0, $now0) = split /\|/, $node->safe_psql('postgres', $status);

# After each step: the backends see it (libfaketime re-reads the file once
# a second), then the worker ticks on: 400 ticks (4 s at 10 ms) after the
# step is the window measured.
my $ticks = 'SELECT ticks FROM walpilot.status';
my $epoch = 'SELECT extract(epoch FROM now())::bigint';
set_offset('+3600');
wait_until('the server\'s wall clock jumped an hour forward', 30,
	sub { $node->safe_psql('postgres', $epoch) - $now0 >= 3600 });
my $tj = $node->safe_psql('postgres', $ticks);
wait_until('the worker ticked on after the forward jump (400 ticks)', 60,
	sub { $node->safe_psql('postgres', $ticks) - $tj >= 400 });
my ($t1, $m1, $c1, $now1) = split /\|/, $node->safe_psql('postgres', $status);
set_offset('+0');
wait_until('and back again', 30,
	sub { $node->safe_psql('postgres', $epoch) - $now1 <= -3000 });
$tj = $node->safe_psql('postgres', $ticks);
wait_until('the worker ticked on after the backward jump (400 ticks)', 60,
	sub { $node->safe_psql('postgres', $ticks) - $tj >= 400 });
my ($t2, $m2, $c2, $now2) = split /\|/, $node->safe_psql('postgres', $status);
$load->finish;

my $pm = $node->safe_psql('postgres', 'SELECT count(*) FROM pg_stat_activity WHERE backend_type = \'walpilot worker\'');
is($pm, '1', 'the worker survived both jumps');
unlike(slurp_file($node->logfile), qr/PANIC|was terminated by signal|reinitializing/,
	'no crash');
cmp_ok($c2, '>', $c1, 'commits are timed after the jumps');
like($out, qr/number of failed transactions: 0 /, 'the load never failed');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.timeline
	 WHERE commits < 0 OR samples < 0 OR missed_ticks < 0 OR wal_bytes < 0 OR commit_max_us < 0}),
	'0', 'no negative value in the timeline');
# each second the worker ticked in is one row (the jumps close a second
# early: up to two more); seconds it did not tick in have samples = 0
my ($sampled, $empty) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*) FILTER (WHERE samples > 0), count(*) FILTER (WHERE samples = 0) FROM walpilot.timeline');
note("timeline: $sampled sampled seconds, $empty without a tick");
my $now = Time::HiRes::time();
cmp_ok($sampled, '>=', int($now - $ticking) - 2,
	sprintf('no sampled second is lost to the jumps (%d rows in %.1f s)', $sampled, $now - $ticking));
cmp_ok($sampled, '<=', int($now - $started) + 3,
	sprintf('none is doubled (%d rows in %.1f s since the start)', $sampled, $now - $started));
cmp_ok($m2 - $m0, '<=', 50, 'a clock jump is not counted as missed ticks (' . ($m2 - $m0) . ')');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.commit_latency
	 WHERE bucket_lower_us >= 1000000 AND commits > 0}),
	'0', 'no commit is timed as a second or longer because of the jump');

$node->stop;
done_testing();
