# walpilot.probe(): measures in the directory pg_wal really is, cleans up
# after itself on success, error, cancel and termination, gives clean
# errors for a read-only or full WAL directory, and (under the storage
# emulator) reports the emulated flush time.
use strict;
use warnings;
use Cwd qw(realpath);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $tempdir = PostgreSQL::Test::Utils::tempdir;

# ---- pg_wal symlinked to another directory ----
my $waldir = "$tempdir/wal_elsewhere";
my $node = walpilot_node('probe', '', init => { extra => [ '--waldir', $waldir ] });
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');

ok(-l $node->data_dir . '/pg_wal', 'pg_wal is a symlink');
my $real = realpath($waldir);

my $rows = $node->safe_psql('postgres', q{
	SELECT method, coalesce(writes::text, '-'),
	       op_us_p50 > 0 AND op_us_p99 >= op_us_p50 AND op_us_mean > 0
	         AND ops_per_sec > 0,
	       wal_dir
	  FROM walpilot.probe(1)});
my %seen;
for my $line (split /\n/, $rows)
{
	my ($m, $w, $okv, $dir) = split /\|/, $line;
	$seen{"$m/$w"} = $okv;
	is($dir, $real, "$m/$w: probed in the symlink target");
}
for my $m (qw(fsync fdatasync open_sync open_datasync))
{
	for my $w (1, 2)
	{
		is($seen{"$m/$w"}, 't', "$m at $w write(s) per sync measured");
	}
}
is($seen{'fsync_writethrough/-'}, '',
	'fsync_writethrough (absent on Linux) is a row with NULLs');

sub leftovers
{
	opendir(my $dh, $waldir) or die "opendir $waldir: $!";
	my @f = grep { /^walpilot_probe/ } readdir($dh);
	closedir($dh);
	return scalar @f;
}
is(leftovers(), 0, 'no probe file left after a probe');

# The storage view keeps the result and a flush estimate from the probe.
is($node->safe_psql('postgres',
		"SELECT count(*) FROM walpilot.storage WHERE kind = 'probe' AND wal_dir = '$real'"),
	'9', 'walpilot.storage shows the last probe');
ok($node->poll_query_until('postgres',
		"SELECT us_p50 > 0 FROM walpilot.storage WHERE kind = 'flush_estimate' AND method IS NOT NULL"),
	'a flush-latency estimate appears');
like($node->safe_psql('postgres',
		"SELECT note FROM walpilot.probe(0.1, ARRAY['fsync_writethrough'])"),
	qr/not measured: this platform has no fsync_writethrough/,
	'the missing method has a note');

# ---- cancel (statement_timeout) removes the file ----
my ($ret, $out, $err) = $node->psql('postgres',
	"SET statement_timeout = '1500ms'; SELECT * FROM walpilot.probe(60)");
like($err, qr/canceling statement due to statement timeout/, 'long probe cancelled');
is(leftovers(), 0, 'no probe file left after a cancel');

# ---- termination (FATAL) removes the file too ----
my ($bout, $berr) = ('', '');
my $h = IPC::Run::start(
	[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c',
	  'SELECT * FROM walpilot.probe(60)' ],
	'>', \$bout, '2>', \$berr);
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'probe file exists while probing');
$node->safe_psql('postgres', q{
	SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	 WHERE query LIKE '%walpilot.probe(60)%' AND pid <> pg_backend_pid()});
$h->finish;
like($berr, qr/terminating connection/, 'probing backend terminated');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'no probe file left after pg_terminate_backend');

# ---- one probe at a time ----
$h = IPC::Run::start(
	[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c',
	  'SELECT count(*) FROM walpilot.probe(3)' ],
	'>', \$bout, '2>', \$berr);
poll_until('the background probe has its file', undef, sub {
	$node->safe_psql('postgres',
		"SELECT count(*) = 1 FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'") eq 't';
});
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM walpilot.probe(0.1)');
like($err, qr/another walpilot probe is running/, 'a second concurrent probe is refused');
$h->finish;

# ---- read-only WAL directory: clean error naming the path, no file ----
chmod(0555, $waldir) or die "chmod: $!";
($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM walpilot.probe(0.2)');
chmod(0700, $waldir) or die "chmod: $!";
like($err, qr/could not create walpilot probe file "\Q$real\E\/walpilot_probe\.\d+": Permission denied/,
	'read-only WAL directory: clear error naming the path');
is(leftovers(), 0, 'read-only WAL directory: no file left');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up after the error');

# ---- periodic probing by the worker (walpilot.probe_interval) ----
$node->append_conf('postgresql.conf', "walpilot.probe_interval = 10\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM walpilot.storage
	 WHERE kind = 'periodic_probe' AND method = current_setting('wal_sync_method')
	   AND writes = 1 AND samples > 0 AND us_p50 > 0}),
	'the worker probes the configured wal_sync_method periodically');
is(leftovers(), 0, 'no probe file left by the periodic probe');
$node->append_conf('postgresql.conf', "walpilot.probe_interval = 0\n");
$node->reload;

# ---- fsync = off: reported, not probed ----
$node->append_conf('postgresql.conf', "fsync = off\n");
$node->reload;
poll_until('fsync = off is in force', undef, sub {
	$node->safe_psql('postgres', 'SHOW fsync') eq 'off';
});
like($node->safe_psql('postgres',
		"SELECT string_agg(DISTINCT note, ';') FROM walpilot.probe(0.1)"),
	qr/^not measured: fsync is off/, 'fsync = off: every row says why nothing was probed');
$node->stop;

# ---- full WAL directory: a file-size limit makes writes fail (EFBIG) ----
# The server ignores SIGXFSZ so that a ulimit acts like a full disk.  With
# 64 MB WAL segments and a 32 MB limit the probe's zero-fill fails while the
# server's own WAL (a few MB into its segment) is unaffected.
my $full = walpilot_node('full', '', init => { extra => [ '--wal-segsize=64' ] });
my $pgdata = $full->data_dir;
my $logfile = $full->logfile;
system('bash', '-c',
	"ulimit -f 32768 && pg_ctl -w -D '$pgdata' -l '$logfile' start >/dev/null") == 0
  or die 'could not start the size-limited server';
$full->_update_pid(1);
$full->safe_psql('postgres', 'CREATE EXTENSION walpilot');
($ret, $out, $err) = $full->psql('postgres', "SELECT * FROM walpilot.probe(0.2, ARRAY['fdatasync'])");
like($err, qr/could not write walpilot probe file ".*\/pg_wal\/walpilot_probe\.\d+": (File too large|No space left on device)/,
	'full WAL directory: clear error naming the path');
is($full->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'0', 'full WAL directory: no file left');
unlike(slurp_file($logfile), qr/PANIC/, 'no PANIC');
$full->stop;

# ---- under the storage emulator: the emulated flush time ----
SKIP:
{
	skip 'storage emulator not built (test/emulator/*.so missing)', 2
	  unless defined emulator_library();

	my $emu = walpilot_node('emu');
	# real_sync=0: a real disk busy with another run's fsyncs must not set
	# the p50
	start_emulated($emu, 'flush_us=4000,jitter_us=0,real_sync=0');
	$emu->safe_psql('postgres', 'CREATE EXTENSION walpilot');
	my $p50 = $emu->safe_psql('postgres',
		"SELECT op_us_p50 FROM walpilot.probe(2, ARRAY['fdatasync']) WHERE writes = 1");
	cmp_ok($p50, '>=', 4000 * 0.8, "emulated 4 ms flush: p50 $p50 us >= -20 %");
	cmp_ok($p50, '<=', 4000 * 1.2, "emulated 4 ms flush: p50 $p50 us <= +20 %");
	$emu->stop;
}

done_testing();
