# Readers never wait: 20 concurrent readers of every view, plus
# walpilot.reset(), while a gather trial runs under a flush-bound load.
# Every single call must come back within a generous bound, and the load
# and the worker must go on meanwhile.
# walpilot-test: alone (every reader call has a time bound)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

emulator_shim();
my $bound_us = 2_000_000;
my $read_seconds = 8;

my $node = walpilot_node('readers', q{
walpilot.mode = 'tune'
max_connections = 60
});
start_emulated($node, 'hdd');
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (id bigserial, v int)');

my @scripts;
sub script
{
	my ($name, $body, $weight) = @_;
	my $path = $node->basedir . "/$name.sql";
	open my $fh, '>', $path or die;
	print $fh $body;
	close $fh;
	return "$path\@$weight";
}
my $insert = script('insert', "INSERT INTO t (v) VALUES (1);\n", 1);
foreach my $view (qw(status wait_profile commit_latency timeline storage
	checkpoints decisions settings))
{
	push @scripts, script("read_$view", "SELECT count(*) FROM walpilot.$view;\n", 10);
}
push @scripts, script('reset', "SELECT walpilot.reset();\n", 1);

my ($lout, $lerr) = ('', '');
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $insert, '-c', 8, '-j', 2, '-T', 90,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$lout, '2>', \$lerr);
ok($node->poll_query_until('postgres',
		q{SELECT pilot_state = 'trial' AND pilot_candidate LIKE 'gather%' FROM walpilot.status}),
	'a gather trial runs');

my ($t0, $c0) = split /\|/, $node->safe_psql('postgres',
	'SELECT ticks, (SELECT count(*) FROM t) FROM walpilot.status');
my $prefix = $node->basedir . '/readers';
my ($rout, $rerr) = ('', '');
IPC::Run::run(
	[ 'pgbench', '-n', (map { ('-f', $_) } @scripts), '-c', 20, '-j', 2,
	  '-T', $read_seconds, '-l', "--log-prefix=$prefix",
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$rout, '2>', \$rerr);
my ($t1, $c1) = split /\|/, $node->safe_psql('postgres',
	'SELECT ticks, (SELECT count(*) FROM t) FROM walpilot.status');
like($rout, qr/number of failed transactions: 0 /, 'no reader call failed')
  or diag($rout . $rerr);

# the per-call log: client, call no., latency (us), script no., ...
my (%calls, %max_us);
my $slow = 0;
foreach my $f (glob("$prefix.*"))
{
	open my $lf, '<', $f or die;
	while (<$lf>)
	{
		my ($client, $no, $us, $script) = split;
		$calls{$script}++;
		$max_us{$script} = $us if !defined $max_us{$script} || $us > $max_us{$script};
		$slow++ if $us >= $bound_us;
	}
	close $lf;
}
my @names = ((map { /read_(\w+)\.sql/ ? $1 : 'reset' } @scripts));
foreach my $i (0 .. $#names)
{
	cmp_ok($calls{$i} // 0, '>', 0, "$names[$i]: called by the 20 readers");
	cmp_ok($max_us{$i} // 0, '<', $bound_us,
		sprintf('%s: slowest of %d calls took %.1f ms', $names[$i], $calls{$i} // 0,
			($max_us{$i} // 0) / 1000));
}
is($slow, 0, "no call of any reader took 2 s or more");
cmp_ok($t1 - $t0, '>=', 100 * $read_seconds / 4,
	'the worker kept ticking under the readers (' . ($t1 - $t0) . ' ticks)');
cmp_ok($c1 - $c0, '>', 0, 'the load kept committing under the readers (' . ($c1 - $c0) . ' rows)');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.timeline WHERE commits < 0 OR wal_bytes < 0 OR samples < 0}),
	'0', 'no negative delta after all those resets');

$load->kill_kill;
$node->stop;
done_testing();
