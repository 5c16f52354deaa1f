# walpilot.probe() under faults: the probing backend cancelled, and killed
# with SIGKILL (crash restart; its file must not stay in pg_wal forever),
# and the WAL directory made read-only while a probe runs.  A full WAL
# filesystem is 023_probe_space.pl's (free space emulated).
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = walpilot_node('probe_faults', 'restart_after_crash = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
my $waldir = $node->data_dir . '/pg_wal';
my $probe_files = "SELECT count(*) FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'";

sub leftovers
{
	opendir(my $dh, $waldir) or die "opendir $waldir: $!";
	my @f = grep { /^walpilot_probe/ } readdir($dh);
	closedir($dh);
	return scalar @f;
}

# a long probe in the background; returns the harness and its stderr
sub start_probe
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	$node->poll_query_until('postgres', "SELECT ($probe_files) = 1")
	  or die 'the probe did not start';
	my $pid = $node->safe_psql('postgres', q{
		SELECT pid FROM pg_stat_activity
		 WHERE query LIKE '%walpilot.probe(%' AND pid <> pg_backend_pid()});
	return ($h, \$err, $pid, \$out);
}

#
# cancel (pg_cancel_backend, what a DBA does)
#
my ($h, $err, $pid) = start_probe('SELECT * FROM walpilot.probe(60)');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$h->finish;
like($$err, qr/canceling statement due to user request/, 'probe cancelled');
is(leftovers(), 0, 'no probe file left after the cancel');
($h, $err, $pid) = start_probe('SELECT * FROM walpilot.probe(60)');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$h->finish;
is($node->safe_psql('postgres', q{SELECT count(*) FROM walpilot.probe(0.2, ARRAY['fdatasync'])}),
	'2', 'a new probe runs after a cancelled one (the one-probe lock was released)');

#
# the WAL directory becomes read-only while a probe runs
#
# The directory turns read-only once the probe's file exists (start_probe
# waits for it) and 3 s before the probe ends: the probe writes to its open
# file to the end, and then cannot unlink it.
my $out;
($h, $err, $pid, $out) = start_probe(q{SELECT count(*) FROM walpilot.probe(3, ARRAY['fdatasync'])});
chmod(0555, $waldir) or die "chmod: $!";
$h->finish;
my $left_while_ro = -e "$waldir/walpilot_probe.$pid" ? 1 : 0;
my $left_all = leftovers();
chmod(0700, $waldir) or die "chmod: $!";
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server up after the read-only WAL directory');
unlike(slurp_file($node->logfile), qr/PANIC/, 'no PANIC');
like($$out, qr/^\s*2$/m, 'the probe ran to its end (its file was already open)');
# what the sweep below is for: a file the probe could not remove
is("$left_while_ro/$left_all", '1/1',
	"the probe's file walpilot_probe.$pid is left: it could not be removed while pg_wal was read-only");
# the next worker sweeps it
{
	# the backend that probed has exited (the sweep spares a live pid)
	$node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid")
	  or die "the probing backend $pid did not exit";
	my $sweep_offset = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'walpilot worker'");
	# the sweep runs at worker start: after the restart delay (5 s) and the
	# exiting worker's own clean-up, which a slow machine stretches
	wait_until('a probe file that could not be removed is swept by the next worker',
		60, sub { leftovers() == 0 });
	wait_until('the worker logs the file it swept', 10,
		sub { slurp_file($node->logfile, $sweep_offset)
			  =~ /removed stale walpilot probe file "pg_wal\/walpilot_probe\.$pid"/ });
}
unlink glob("$waldir/walpilot_probe.*");

#
# SIGKILL of the probing backend: crash restart, the file must not stay
#
($h, $err, $pid) = start_probe('SELECT * FROM walpilot.probe(60)');
my $log_offset = -s $node->logfile;
kill 'KILL', $pid;
$h->finish;
wait_crash_restart($node, $log_offset);
ok($node->poll_query_until('postgres',
		'SELECT worker_pid IS NOT NULL AND ticks > 0 FROM walpilot.status'),
	'after SIGKILL of the probing backend the server is back with its worker');
like(slurp_file($node->logfile, $log_offset), qr/reinitializing/, '(it was a crash restart)');
wait_until("the killed backend's probe file walpilot_probe.$pid is swept", 8,
	sub { leftovers() == 0 });
unlink glob("$waldir/walpilot_probe.*");
is($node->safe_psql('postgres', q{SELECT count(*) FROM walpilot.probe(0.2, ARRAY['fdatasync'])}),
	'2', 'probing works after the crash restart');
is(leftovers(), 0, 'and leaves no file');

$node->stop;
done_testing();
