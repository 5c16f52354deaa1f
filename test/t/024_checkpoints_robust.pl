# walpilot.checkpoints, robustly: the reason is read right whatever the
# lc_messages language, and a pg_control the worker cannot read is logged
# and retried, never an error that restarts the worker.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

# ---- translated log lines (a locale with a PostgreSQL translation) ----
my $locale;
for my $l (`locale -a 2>/dev/null`)
{
	chomp $l;
	my ($lang) = $l =~ /^([a-z]{2})_[A-Z]{2}\.(?:utf8|UTF-8)$/;
	next unless defined $lang && $lang ne 'en';
	next unless glob("/usr/share/locale/$lang/LC_MESSAGES/postgres-*.mo");
	$locale = $l;
	last;
}

my $node;
my $translated = 0;
if (defined $locale)
{
	$node = new_node('ckpt_i18n', conf => qq{
shared_preload_libraries = 'walpilot'
log_checkpoints = on
lc_messages = '$locale'
max_wal_size = 32MB
min_wal_size = 32MB
});
	$node->start;
	my ($ret, $o, $e) = $node->psql('postgres', 'SELECT 1/0');
	$translated = $e !~ /division by zero/;
	$node->stop unless $translated;
}

SKIP:
{
	skip 'no locale with a PostgreSQL translation installed (e.g. localedef -i de_DE -f UTF-8 de_DE.UTF-8)', 4
	  unless defined $locale;
	skip "the server finds no message catalog for $locale", 4
	  unless $translated;

	$node->safe_psql('postgres',
		'CREATE EXTENSION walpilot; CREATE TABLE t (id int, pad text)');
	$node->safe_psql('postgres',
		"INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g");
	$node->safe_psql('postgres', 'CHECKPOINT');
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) >= 1 FROM walpilot.checkpoints
		 WHERE reason = 'requested' AND buffers_written > 0}),
		"$locale: a CHECKPOINT is recorded as requested, with its buffers");

	# enough WAL for a WAL-volume checkpoint
	$node->safe_psql('postgres',
		"INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 200000) g");
	ok($node->poll_query_until('postgres',
			"SELECT count(*) >= 1 FROM walpilot.checkpoints WHERE reason = 'wal'"),
		"$locale: a WAL-volume checkpoint is recorded as wal");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM walpilot.checkpoints WHERE reason IS NULL OR reason NOT IN ('requested', 'wal', 'time')"),
		'0', "$locale: no other reason appears");
	unlike(slurp_file($node->logfile), qr/LOG:  checkpoint starting:/,
		"$locale: the server log is translated (no English checkpoint line)");
	$node->stop;
}

# ---- pg_control unreadable while a poll-detected checkpoint runs ----
# wal_level = replica for pg_backup_start
$node = new_node('ckpt_control', init => { allows_streaming => 1 }, conf => qq{
shared_preload_libraries = 'walpilot'
log_checkpoints = off
checkpoint_timeout = 120s
checkpoint_completion_target = 0.5
});
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION walpilot; CREATE TABLE t (id int, pad text)');
# checkpoints closer together than pg_control is read: every one ends
# (a record that was not the newest any more used to stay open for ever)
# (the pause is the scenario, not a wait: shorter than the worker's 2-s
# pg_control poll, long enough for the worker to see the first one start)
$node->safe_psql('postgres', 'CHECKPOINT');
usleep(600_000);
$node->safe_psql('postgres', 'CHECKPOINT');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) >= 1 AND count(*) = count(finished_at)
	  FROM walpilot.checkpoints}),
	'back-to-back checkpoints are all recorded as finished');
# about 850 dirty pages: a spread checkpoint has 60 s (120 s x 0.5) for
# them, far longer than pg_control stays unreadable below even on a loaded
# machine (the checkpointer PANICs if it ends while it cannot write it)
$node->safe_psql('postgres',
	"INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 30000) g");
my $wpid = $node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status');

# pg_backup_start(fast => false) requests a spread checkpoint and waits
my ($in, $out, $err) = ('', '', '');
my $h = IPC::Run::start(
	[ 'psql', '-X', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "SELECT pg_backup_start('walpilot', false);\n";
$h->pump_nb;
ok($node->poll_query_until('postgres',
		'SELECT count(*) = 1 FROM walpilot.checkpoints WHERE finished_at IS NULL'),
	'a spread checkpoint is running (detected without log_checkpoints)');

my $control = $node->data_dir . '/global/pg_control';
# the checkpointer writes pg_control only at the end: keep the window short,
# just until the worker has failed to read it
my $log_offset = -s $node->logfile;
chmod(0000, $control) or die "chmod: $!";
# (bounded in seconds, not wait_for_log's minutes: the checkpoint has 60)
wait_until('the failed read is logged', 12, sub {
	substr(slurp_file($node->logfile), $log_offset) =~
	  /LOG:  walpilot could not read the control file: could not open file "[^"]*global\/pg_control"/;
});
# readable again at once: the checkpointer PANICs if the checkpoint ends
# while it cannot write pg_control (a loaded 19 once ended it 2 s after
# the worker's failed read)
chmod(0600, $control) or die "chmod: $!";
my $ticks = $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status');
wait_until('the worker ticks on after the failed read', 5, sub {
	$node->safe_psql('postgres',
		"SELECT ticks >= $ticks + 3 FROM walpilot.status") eq 't';
});
my $still = $node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status');
is($still, $wpid, 'the worker survives an unreadable pg_control (same pid)');
# an immediate checkpoint request makes the spread one finish now
$node->safe_psql('postgres', 'CHECKPOINT');

ok($node->poll_query_until('postgres',
		'SELECT count(*) = 0 FROM walpilot.checkpoints WHERE finished_at IS NULL'),
	'the checkpoint is seen to finish once pg_control is readable');
$in .= "SELECT pg_backup_stop();\n\\q\n";
$h->finish;
is($node->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'),
	'1', 'the worker never restarted');
unlike(slurp_file($node->logfile), qr/walpilot worker" \(PID \d+\) exited/,
	'no worker exit in the log');
$node->stop;
done_testing();
