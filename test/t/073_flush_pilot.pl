# The checkpoint_flush_after pilot in tune mode, on an emulated disk with
# slow data writes and short checkpoints: it runs a trial one checkpoint
# per window, the checkpointer really runs each window with the value the
# trial meant, and the trial ends in a verdict with its evidence.  With
# walpilot.tune_checkpoint_flush = off it does nothing.
#
# checkpoint_completion_target = 0.95: the next checkpoint starts 1.5 s
# after one ends, sooner than that checkpoint's commit figures come in
# (2 s or more): each arm's value must reach the checkpointer before its
# checkpoint starts all the same.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my ($shim) = glob("$ENV{WALPILOT_SRC}/test/emulator/*.so");
plan skip_all => 'storage emulator not built (make -C test/emulator)'
  unless defined $shim && -f $shim;

my $node = PostgreSQL::Test::Cluster->new('flushpilot');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'walpilot'
fsync = on
log_checkpoints = on
checkpoint_timeout = 30s
checkpoint_completion_target = 0.95
max_wal_size = 1GB
shared_buffers = 64MB
walpilot.mode = 'tune'
walpilot.tune_commit_delay = off
walpilot.tune_checkpoint_flush = off
});
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{WALPILOT_STORAGE} = 'hdd,bw_mbps=10,wal_bw_mbps=150';
	local $ENV{WALPILOT_STORAGE_SHM} = "walpilot-emu-flushpilot-$$";
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot');
$node->command_ok([ 'pgbench', '-i', '-q', '-s', '5', $node->connstr('postgres') ],
	'pgbench -i');

my ($out, $err);
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-b', 'simple-update', '-c', '4', '-j', '2',
	  '-T', '600', '-R', '100', $node->connstr('postgres') ],
	'>', \$out, '2>', \$err);

# ---- off: two loaded checkpoints, no decision ----
ok($node->poll_query_until('postgres', q{
	SELECT count(*) >= 2 FROM walpilot.checkpoints
	 WHERE finished_at IS NOT NULL AND commits > 0}),
	'two checkpoints under load with tune_checkpoint_flush = off');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.decisions WHERE setting = 'checkpoint_flush_after'}),
	'0', 'walpilot.tune_checkpoint_flush = off: no decision');

# ---- on: a trial, window by window ----
$node->append_conf('postgresql.conf', "walpilot.tune_checkpoint_flush = on\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after'
	   AND reason LIKE 'trial: 512kB against 256kB%'}),
	'a trial starts with the next value up, a neighbour of the configured 256kB');
is($node->safe_psql('postgres', q{
	SELECT state || ' ' || candidate FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	'trial 512kB', 'walpilot.pilots shows the trial and its candidate');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND outcome IS NOT NULL}),
	'the trial ends in a verdict');
my $verdict = $node->safe_psql('postgres', q{
	SELECT outcome FROM walpilot.decisions
	 WHERE setting = 'checkpoint_flush_after' AND outcome IS NOT NULL
	 ORDER BY decided_at LIMIT 1});
like($verdict, qr/^(kept|rejected): /, "verdict: $verdict");
is($node->safe_psql('postgres', q{
	SELECT count(*) > 0 FROM walpilot.checkpoints WHERE flush_after_kb = 512}),
	't', 'the checkpointer ran a candidate window with 512kB');
if ($verdict =~ /late|clearly worse/)
{
	pass('an early stop needs no full trial');
}
else
{
	my ($pairs) = $verdict =~ /(\d+) pairs/;
	cmp_ok($pairs // 0, '>=', 2,
		"a full verdict rests on at least 2 windows per arm ($verdict)");
	is($node->safe_psql('postgres', q{
		SELECT string_agg(flush_after_kb::text, ' ' ORDER BY started_at)
		  FROM (SELECT flush_after_kb, started_at FROM walpilot.checkpoints
		         WHERE reason IN ('time', 'wal') AND started_at >
		               (SELECT min(decided_at) FROM walpilot.decisions
		                 WHERE setting = 'checkpoint_flush_after'
		                   AND reason LIKE 'trial: 512kB against 256kB%')
		         ORDER BY started_at LIMIT 3) s}),
		'512 512 256',
		'the checkpoints after the trial began ran its arms in ABBA order, none skipped');
}
# the configured value's arm (or the verdict) removed walpilot's line: the
# LOG line says so, not that walpilot stopped managing the setting
# (after an early stop the outcome is recorded before the revert is written)
ok($node->wait_for_log(
		qr/walpilot put postgresql.auto.conf back\n[^\n]*DETAIL:  checkpoint_flush_after: the configured value is in force again/),
	'going back to the configured value is logged as such');
my $trial_log = slurp_file($node->logfile);
unlike($trial_log, qr/walpilot stopped managing/,
	'a trial does not log that walpilot stopped managing the setting');
# the value in force always matches walpilot.settings
ok($node->poll_query_until('postgres', q{
	SELECT (w.managed_by = 'walpilot') =
	       (pg_read_file('postgresql.auto.conf') LIKE '%walpilot trial value%')
	  FROM walpilot.settings w WHERE w.name = 'checkpoint_flush_after'}),
	'walpilot.settings agrees with postgresql.auto.conf');

# ---- tune_checkpoint_flush off again: the configured value comes back ----
$node->append_conf('postgresql.conf', "walpilot.tune_checkpoint_flush = off\n");
$node->reload;
ok($node->poll_query_until('postgres', q{
	SELECT current_setting('checkpoint_flush_after') = '256kB'
	   AND pg_read_file('postgresql.auto.conf') NOT LIKE '%walpilot%'}),
	'turning the pilot off puts the configured value back');
like($node->safe_psql('postgres', q{
	SELECT state || ': ' || reason FROM walpilot.pilots
	 WHERE pilot = 'checkpoint_flush_after'}),
	qr/^idle: walpilot.tune_checkpoint_flush = off/,
	'walpilot.pilots says why the pilot is idle');

$load->kill_kill;
$node->stop;
unlink "/dev/shm/walpilot-emu-flushpilot-$$";
done_testing();
