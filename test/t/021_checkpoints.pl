# walpilot.checkpoints: requested, timed and WAL-volume checkpoints are
# recorded with their reason, buffers and phase times, from the
# checkpointer's log line, and also (without log_checkpoints) from the redo
# pointer, the control file and pg_stat_bgwriter.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = walpilot_node('ckpt', q{
restart_after_crash = on
log_checkpoints = on
checkpoint_timeout = 30s
checkpoint_completion_target = 0.1
max_wal_size = 32MB
min_wal_size = 32MB
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION walpilot;
	CREATE TABLE t (id int, pad text);
});

sub write_rows
{
	my ($n) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, $n) g");
}

sub nrows
{
	my ($where) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM walpilot.checkpoints WHERE $where");
}

# ---- two requested checkpoints with writes between ----
my $before = nrows('true');
write_rows(5000);
$node->safe_psql('postgres', 'CHECKPOINT');
write_rows(5000);
$node->safe_psql('postgres', 'CHECKPOINT');

my $rows = $node->safe_psql('postgres', qq{
	SELECT reason, buffers_written,
	       write_ms >= 0 AND sync_ms >= 0,
	       write_ms + sync_ms <= extract(epoch FROM finished_at - started_at) * 1000 + 5,
	       finished_at >= started_at,
	       wal_bytes > 0,
	       flush_after_kb = (SELECT setting::int * 8 FROM pg_settings
	                          WHERE name = 'checkpoint_flush_after')
	  FROM walpilot.checkpoints ORDER BY started_at DESC LIMIT 2});
my @r = split /\n/, $rows;
is(scalar @r, 2, 'two CHECKPOINTs give two rows');
for my $i (0, 1)
{
	my ($reason, $bufs, $phases, $fits, $ordered, $wal, $flush) =
	  split /\|/, $r[$i];
	is($reason, 'requested', "checkpoint $i: reason requested");
	cmp_ok($bufs, '>', 0, "checkpoint $i: buffers_written $bufs > 0");
	is($phases, 't', "checkpoint $i: write and sync phase times known");
	is($fits, 't', "checkpoint $i: phases fit inside start..end");
	is($ordered, 't', "checkpoint $i: finished after it started");
	is($wal, 't', "checkpoint $i: WAL distance > 0");
	is($flush, 't', "checkpoint $i: checkpoint_flush_after in force");
}
# A checkpoint no closed second of the timeline falls in has no commit
# figures (a slow one that spans a second boundary has them)
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.checkpoints c
	 WHERE (commits IS NOT NULL OR stall_seconds IS NOT NULL)
	   AND NOT EXISTS (SELECT FROM walpilot.timeline s
	                    WHERE s.ts >= c.started_at AND s.ts < c.finished_at)}),
	'0', 'commit columns are NULL while no commit timeline second is available');

# ---- a checkpoint_timeout checkpoint is labelled time ----
write_rows(1000);
ok($node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM walpilot.checkpoints WHERE reason = 'time' AND finished_at IS NOT NULL"),
	'a checkpoint_timeout checkpoint is recorded with reason time');
is($node->safe_psql('postgres', q{
	SELECT buffers_written > 0 AND write_ms >= 0 AND sync_ms >= 0
	  FROM walpilot.checkpoints WHERE reason = 'time'
	 ORDER BY started_at DESC LIMIT 1}),
	't', 'the timed checkpoint has its numbers');

# ---- forced WAL-volume checkpoints are labelled wal ----
write_rows(250000);
ok($node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM walpilot.checkpoints WHERE reason = 'wal' AND finished_at IS NOT NULL"),
	'a max_wal_size checkpoint is recorded with reason wal');
cmp_ok($node->safe_psql('postgres', q{
	SELECT max(wal_bytes) FROM walpilot.checkpoints WHERE reason = 'wal'}),
	'>', 8 * 1024 * 1024, 'the wal checkpoint has a WAL distance of several MB');

# ---- without log_checkpoints: detected from the redo pointer ----
$node->append_conf('postgresql.conf', "log_checkpoints = off\n");
$node->reload;
poll_until('log_checkpoints = off is in force', undef, sub {
	$node->safe_psql('postgres', 'SHOW log_checkpoints') eq 'off';
});
my $n0 = nrows('true');
write_rows(5000);
$node->safe_psql('postgres', 'CHECKPOINT');
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) > $n0 FROM walpilot.checkpoints
	 WHERE finished_at IS NOT NULL AND buffers_written > 0}),
	'log_checkpoints = off: the CHECKPOINT is still recorded with its buffers');
ok($node->poll_query_until('postgres', qq{
	SELECT count(*) > 0 FROM
	  (SELECT * FROM walpilot.checkpoints ORDER BY started_at OFFSET $n0) c
	 WHERE reason = 'requested' AND write_ms >= 0 AND sync_ms >= 0}),
	'log_checkpoints = off: reason requested and phase times');

# ---- the ring survives a worker restart, not a server restart ----
# a new pid: right after the terminate the old one may still be shown
my $wpid = $node->safe_psql('postgres', 'SELECT worker_pid FROM walpilot.status');
ok($wpid =~ /^\d+$/, "the worker runs (pid $wpid)");
$node->safe_psql('postgres', "SELECT pg_terminate_backend($wpid)");
ok($node->poll_query_until('postgres',
		"SELECT worker_pid IS NOT NULL AND worker_pid <> $wpid FROM walpilot.status"),
	'the terminated worker is restarted');
cmp_ok(nrows('true'), '>=', $n0 + 1, 'records survive a worker restart');
unlike(slurp_file($node->logfile), qr/PANIC|was terminated by signal/,
	'no crash');

# ---- crash recovery ends with an end-of-recovery checkpoint ----
$node->append_conf('postgresql.conf', "log_checkpoints = on\n");
write_rows(1000);
$node->stop('immediate');
$node->start;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM walpilot.checkpoints
	 WHERE reason = 'end-of-recovery' AND finished_at IS NOT NULL}),
	'the end-of-recovery checkpoint after a crash is labelled end-of-recovery');

$node->stop;
done_testing();
