# The probe never fills pg_wal: it checks the free space (statvfs) against
# its file plus 8 WAL segments and refuses cleanly; the worker's automatic
# probes use a small file; probe files of processes that died (SIGKILL) are
# swept when the worker starts.  Free space is emulated by the storage
# emulator's statvfs_free_mb key.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = walpilot_node('probe_space', 'restart_after_crash = on');

sub start_with_free_mb
{
	my ($mb) = @_;
	start_emulated($node, "real,statvfs_free_mb=$mb");
}

sub probe_files
{
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'");
}

SKIP:
{
	skip 'storage emulator not built (test/emulator/*.so missing)', 7
	  unless defined emulator_library();

	# 140 MB free: less than a 16 MB probe file + 8 segments (144 MB), more
	# than the automatic probe's small file + 8 segments.
	start_with_free_mb(140);
	$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT * FROM walpilot.probe(0.2, ARRAY['fdatasync'])",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	isnt($ret, 0, 'probe refused with 140 MB free');
	like($err, qr/ERROR:  53100: not enough free space in the WAL directory ".*" for a walpilot probe/,
		'refusal: SQLSTATE 53100 (disk_full) naming the directory');
	like($err, qr/DETAIL:  143360 kB are free; the probe needs 147456 kB: its 16384 kB file and 8 WAL segments/,
		'refusal: detail gives free and needed space');
	like($err, qr/HINT:  Free space in the WAL file system/, 'refusal: hint');
	is(probe_files(), '0', 'refused probe created no file');

	# The automatic probe fits: its file is a few pages, not a segment.
	$node->append_conf('postgresql.conf', "walpilot.probe_interval = 10\n");
	$node->reload;
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM walpilot.storage
		 WHERE kind = 'periodic_probe' AND samples > 0 AND us_p50 > 0}),
		'the periodic probe runs with 140 MB free (small file)');
	$node->append_conf('postgresql.conf', "walpilot.probe_interval = 0\n");
	$node->stop;

	# 100 MB free: the periodic probe is refused too, and says why.
	start_with_free_mb(100);
	$node->append_conf('postgresql.conf', "walpilot.probe_interval = 10\n");
	$node->reload;
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM walpilot.storage
		 WHERE kind = 'periodic_probe'
		   AND note LIKE 'periodic probe failed: not enough free space%'}),
		'the periodic probe is refused with 100 MB free and records why');
	$node->append_conf('postgresql.conf', "walpilot.probe_interval = 0\n");
	$node->stop;
}

# ---- stale probe files: swept when the worker starts ----
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS walpilot');
my $waldir = $node->data_dir . '/pg_wal';

# a pid that surely no longer runs: a child that has exited
my $dead = `sh -c 'echo \$\$'`;
chomp $dead;
my $live = $node->safe_psql('postgres', 'SELECT pg_backend_pid()');
my $other = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
for my $pid ($dead, $other)
{
	open(my $fh, '>', "$waldir/walpilot_probe.$pid") or die "create: $!";
	close($fh);
}
my $wpid = $node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($wpid)");
ok($node->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL AND worker_pid <> $wpid FROM walpilot.status"),
	'the worker restarts');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_ls_waldir() WHERE name = 'walpilot_probe.$dead'"),
	'the file of a process that no longer exists is removed');
ok(-e "$waldir/walpilot_probe.$other",
	'the file named after a live process is kept');
unlink("$waldir/walpilot_probe.$other");
like(slurp_file($node->logfile),
	qr/removed stale walpilot probe file "pg_wal\/walpilot_probe\.$dead"/,
	'the sweep is logged');

# A probing backend killed with SIGKILL: crash restart, then the sweep.
my ($bout, $berr) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c',
	  'SELECT * FROM walpilot.probe(60)' ],
	'>', \$bout, '2>', \$berr);
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'probe file exists while probing');
my $prober = $node->safe_psql('postgres', q{
	SELECT pid FROM pg_stat_activity
	 WHERE query LIKE '%walpilot.probe(60)%' AND pid <> pg_backend_pid()});
my $log_offset = -s $node->logfile;
kill 'KILL', $prober;
$h->finish;
# polled only once the restart is over: a psql that finds the server
# still recovering exits before it reads its query, and writing that
# query to it fails (broken pipe) instead of polling again
$node->wait_for_log(qr/database system is ready to accept connections/, $log_offset);
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'after SIGKILL and crash restart the probe file is swept');

$node->stop;
done_testing();
