# walpilot.tune_max_wal_size against the DBA's ALTER SYSTEM at the worst
# moments, and against failures of walpilot's own file work.  A small
# LD_PRELOAD library of the test's makes each moment certain:
# - access(postgresql.auto.conf, W_OK), the worker's last question before
#   it writes, waits while the test acts (a pause file);
# - fsync of the directory pg_walpilot/ fails with EIO (a flag file).
#
# - same tick: a DBA's ALTER SYSTEM SET max_wal_size that leaves
#   postgresql.auto.conf with the very modification time walpilot's write
#   left (what a file system with whole-second times does to two writes in
#   one second) is the DBA's: walpilot stops managing it and
#   walpilot.revert() leaves it;
# - between check and write: a DBA's ALTER SYSTEM SET max_wal_size issued
#   while the worker is about to remove its line waits for the worker's
#   step (walpilot holds AutoFileLock from its check to its write) and
#   lands after it: the DBA's line stays;
# - fsync of pg_walpilot/ failing while walpilot forgets its record: a
#   WARNING, never a PANIC (data_sync_retry = off would make fsync_fname's
#   report one);
# - the worker terminated while postgresql.auto.conf.tmp cannot be created:
#   it exits with a LOG line, no FATAL, no PANIC, no worker left in
#   walpilot.status; the next worker cannot take the line back at its start
#   either, and takes it back as soon as the way is clear.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WalpilotTest qw(:DEFAULT slurp_bytes);

my $node = walpilot_node('walraces', q{
restart_after_crash = on
log_checkpoints = on
checkpoint_timeout = 30s
max_wal_size = 32MB
min_wal_size = 32MB
walpilot.mode = 'tune'
walpilot.tune_commit_delay = off
walpilot.tune_checkpoint_flush = off
walpilot.tune_max_wal_size = on
walpilot.tune_interval = 10s
walpilot.max_wal_size_max = 1GB
walpilot.sample_interval = 10ms
});
my $pgdata = $node->data_dir;
my $autoconf = "$pgdata/postgresql.auto.conf";
my $record = "$pgdata/pg_walpilot/pgsql_tmp.max_wal_size";
my $ctl = $node->basedir . '/ctl';
mkdir $ctl or die "mkdir: $!";

my $shim = build_probe_module($node, 'walraces_shim', <<'EOC');
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int	(*real_access) (const char *, int);
static int	(*real_fsync) (int);

static int
exists(const char *dir, const char *name)
{
	char		p[4096];

	if (real_access == NULL)
		real_access = dlsym(RTLD_NEXT, "access");
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return real_access(p, F_OK) == 0;
}

static void
touch(const char *dir, const char *name)
{
	char		p[4096];
	int			fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((fd = open(p, O_CREAT | O_WRONLY, 0600)) >= 0)
		close(fd);
}

/* the worker's last question before it writes postgresql.auto.conf */
int
access(const char *path, int mode)
{
	const char *ctl = getenv("WALRACES_CTL");

	if (real_access == NULL)
		real_access = dlsym(RTLD_NEXT, "access");
	if (ctl != NULL && mode == W_OK &&
		strcmp(path, "postgresql.auto.conf") == 0 && exists(ctl, "pause"))
	{
		char		p[4096];
		int			i;

		snprintf(p, sizeof(p), "%s/pause", ctl);
		unlink(p);
		touch(ctl, "paused");
		for (i = 0; i < 12000 && !exists(ctl, "go"); i++)
		{
			struct timespec ts = {0, 10 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
	}
	return real_access(path, mode);
}

int
fsync(int fd)
{
	const char *ctl = getenv("WALRACES_CTL");

	if (real_fsync == NULL)
		real_fsync = dlsym(RTLD_NEXT, "fsync");
	if (ctl != NULL && exists(ctl, "fail_fsync"))
	{
		char		l[64],
					t[4096];
		ssize_t		n;

		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		n = readlink(l, t, sizeof(t) - 1);
		if (n > 12)
		{
			t[n] = '\0';
			if (strcmp(t + n - 12, "/pg_walpilot") == 0)
			{
				errno = EIO;
				return -1;
			}
		}
	}
	return real_fsync(fd);
}
EOC

sub start_node
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{WALRACES_CTL} = $ctl;
	$node->start;
}

start_node();
$node->safe_psql('postgres', q{
	CREATE EXTENSION walpilot;
	CREATE TABLE t (id int PRIMARY KEY, v int, pad text) WITH (fillfactor = 50);
	INSERT INTO t SELECT g, 0, repeat('x', 900) FROM generate_series(1, 20000) g;
});
my $pm_start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

sub auto_conf { return slurp_bytes($autoconf) // ''; }
sub mtime_ns { my $t = `stat -c %.9Y '$_[0]'`; chomp $t; return $t; }
sub mark { return $node->safe_psql('postgres', 'SELECT clock_timestamp()'); }

sub decisions_after
{
	my ($since) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(decided_at || ' ' || old_value || ' -> ' || new_value || ': ' || reason,
						  E'\\n' ORDER BY decided_at)
		  FROM walpilot.decisions WHERE setting = 'max_wal_size' AND decided_at > '$since'});
}

# bulk updates, 10 a second: several MB of WAL a second, a checkpoint by
# WAL volume every few seconds at 32MB
my $bulk = $node->basedir . '/bulk.sql';
{
	open(my $fh, '>', $bulk) or die;
	print $fh "\\set a random(1, 19500)\nUPDATE t SET v = v + 1 WHERE id BETWEEN :a AND :a + 400;\n";
	close $fh;
}
my ($lout, $lerr);
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '1800', '-R', '10',
	  '-f', $bulk, $node->connstr('postgres') ],
	'>', \$lout, '2>', \$lerr);

# walpilot's line is in postgresql.auto.conf, with its record, and in force
sub wait_managed
{
	my ($what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $t = mark();
	return wait_until("$what: walpilot raises max_wal_size by its line in postgresql.auto.conf", 300, sub {
		auto_conf() =~ /^max_wal_size = '\d+[MG]B'$/m && -e $record
		  && $node->safe_psql('postgres',
			q{SELECT managed_by FROM walpilot.settings WHERE name = 'max_wal_size'}) eq 'walpilot';
	}) || diag(decisions_after($t));
}

# the DBA takes their line out again, and reloads
sub dba_reset
{
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET max_wal_size');
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres', q{SELECT current_setting('max_wal_size') = '32MB'});
}

# ===== same tick: the DBA's file with walpilot's modification time =====
wait_managed('same tick');
my $t_tick = mark();
{
	# ALTER SYSTEM's own result, written as ALTER SYSTEM writes it (a new
	# file renamed over the old), left with the time walpilot's write left
	my $now = auto_conf();
	my $mtime = mtime_ns($autoconf);
	(my $dba = $now) =~ s/^max_wal_size = '[^']*'$/max_wal_size = '36MB'/m;
	my $tmp = "$autoconf.dba";
	open(my $fh, '>', $tmp) or die;
	print $fh $dba;
	close $fh;
	system('touch', '-m', '-d', "\@$mtime", $tmp) == 0 or die 'touch';
	rename($tmp, $autoconf) or die "rename: $!";
	is(mtime_ns($autoconf), $mtime,
		'same tick: postgresql.auto.conf has the DBA\'s line and walpilot\'s modification time');
}
wait_until('same tick: walpilot says the DBA took max_wal_size', 60, sub {
	$node->safe_psql('postgres', qq{
		SELECT count(*) FROM walpilot.decisions
		 WHERE setting = 'max_wal_size' AND decided_at > '$t_tick'
		   AND reason = 'the DBA set max_wal_size = ''36MB'' by ALTER SYSTEM'}) eq '1';
}) or diag(decisions_after($t_tick));
ok(!-e $record, 'same tick: walpilot\'s record is gone');
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
# walpilot.revert() is acted on at the worker's next tick
my $ticks = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
poll_until('same tick: the worker has ticked after walpilot.revert()', 30, sub {
	$node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status') > $ticks + 20 });
like(auto_conf(), qr/^max_wal_size = '36MB'$/m,
	'same tick: walpilot.revert() leaves the DBA\'s line');
dba_reset();

# ===== between check and write: the DBA's ALTER SYSTEM waits =====
wait_managed('check and write');
my $t_cw = mark();
my $log_offset = -s $node->logfile;
touch_file("$ctl/pause");
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
wait_until('check and write: the worker is about to write postgresql.auto.conf', 60,
	sub { -e "$ctl/paused" });
my ($aout, $aerr);
my $dba = IPC::Run::start(
	[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c',
	  q{ALTER SYSTEM SET max_wal_size = '36MB'} ],
	'>', \$aout, '2>', \$aerr);
wait_until('check and write: the DBA\'s ALTER SYSTEM waits for walpilot\'s step (on AutoFileLock)', 20, sub {
	$node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_stat_activity
		 WHERE query LIKE 'ALTER SYSTEM SET max_wal_size%' AND wait_event = 'AutoFile'}) eq '1';
});
touch_file("$ctl/go");
$dba->finish;
is($aerr, '', 'check and write: the DBA\'s ALTER SYSTEM succeeds');
unlink "$ctl/go", "$ctl/paused";
wait_until('check and write: walpilot no longer has a line', 60, sub { !-e $record })
  or diag(decisions_after($t_cw));
like(auto_conf(), qr/^max_wal_size = '36MB'$/m,
	'check and write: the DBA\'s line is in postgresql.auto.conf')
  or diag(auto_conf());
is(scalar(() = auto_conf() =~ /^max_wal_size =/mg), 1,
	'check and write: one max_wal_size line');
dba_reset();

# ===== fsync of pg_walpilot/ fails: a WARNING, no PANIC =====
wait_managed('fsync fails');
my $t_fs = mark();
$log_offset = -s $node->logfile;
touch_file("$ctl/fail_fsync");
$node->safe_psql('postgres', 'SELECT walpilot.revert()');
wait_until('fsync fails: walpilot removes its line', 60, sub {
	my ($rc, $out) = $node->psql('postgres', qq{
		SELECT count(*) FROM walpilot.decisions
		 WHERE setting = 'max_wal_size' AND decided_at > '$t_fs'
		   AND reason = 'walpilot.revert() or DROP EXTENSION'});
	return $rc == 0 && $out eq '1' && auto_conf() !~ /^max_wal_size/m;
}) or diag(decisions_after($t_fs));
unlink "$ctl/fail_fsync";
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/PANIC/, 'fsync fails: no PANIC');
like($log, qr/WARNING:  could not fsync file "pg_walpilot": Input\/output error/,
	'fsync fails: a WARNING says so');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $pm_start,
	'fsync fails: the server did not restart');
ok(!-e $record, 'fsync fails: walpilot\'s record is gone');

# ===== the worker exits while postgresql.auto.conf.tmp cannot be made =====
wait_managed('exit');
my $line = (auto_conf() =~ /^(max_wal_size = '[^']*')$/m)[0];
$log_offset = -s $node->logfile;
my $pid = $node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status');
my $t_exit = mark();
mkdir "$autoconf.tmp" or die "mkdir: $!";
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
wait_until('exit: the worker is gone from walpilot.status', 30, sub {
	$node->safe_psql('postgres', 'SELECT coalesce(worker_pid, 0) FROM walpilot.status') != $pid;
});
wait_until('exit: the worker could not remove its line, and said so', 30, sub {
	slurp_file($node->logfile, $log_offset) =~ /walpilot leaves max_wal_size alone/;
});
# the next worker (5 s later) cannot take it back at its start either
wait_until('exit: the next worker cannot take the line back at its start, and says so', 60, sub {
	slurp_file($node->logfile, $log_offset) =~ /walpilot leaves max_wal_size in postgresql.auto.conf alone/;
});
$log = slurp_file($node->logfile, $log_offset);
like($log, qr/LOG:  walpilot leaves max_wal_size alone\n.*DETAIL:  could not open file "postgresql\.auto\.conf\.tmp": Is a directory/,
	'exit: the log says why walpilot\'s line stays');
unlike($log, qr/FATAL|PANIC/, 'exit: no FATAL, no PANIC');
like(auto_conf(), qr/^\Q$line\E$/m, 'exit: the line stays, for the next worker');
rmdir "$autoconf.tmp" or die "rmdir: $!";
# Once the way is clear the next worker takes it back.  The load goes on,
# so it may raise max_wal_size again right after: its decision row is what
# proves the take-back.
my ($old_value) = $line =~ /'([^']*)'/;
wait_until('exit: the next worker takes the line back', 60, sub {
	$node->safe_psql('postgres', qq{
		SELECT count(*) FROM walpilot.decisions
		 WHERE setting = 'max_wal_size' AND old_value = '$old_value'
		   AND new_value = '(DBA''s)'
		   AND reason LIKE 'walpilot worker start:%'
		   AND decided_at > '$t_exit'}) > 0;
});
like(slurp_file($node->logfile, $log_offset),
	qr/walpilot took back the max_wal_size = '[^']*' a previous worker had set/,
	'exit: the log says so');

$load->kill_kill;
$node->stop;
done_testing();

sub touch_file
{
	open(my $fh, '>', $_[0]) or die "$_[0]: $!";
	close $fh;
}
