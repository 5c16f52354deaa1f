# Where the DBA refuses ALTER SYSTEM, walpilot does not use it either:
# with walpilot.tune_max_wal_size = on and a load whose checkpoints by WAL
# volume call for a larger max_wal_size,
# - postgresql.auto.conf made read-only (chmod 0400, how configuration
#   managers forbid ALTER SYSTEM; ALTER SYSTEM itself would replace the
#   file by a rename all the same), and
# - allow_alter_system = off (PostgreSQL 17 and later; wp_alter_system_allowed
#   in src/core/compat.h; skipped on 15, which has no such setting),
# each make walpilot hold: it writes nothing (postgresql.auto.conf byte for
# byte the DBA's, its mode kept, no record pg_walpilot/pgsql_tmp.max_wal_size,
# the DBA's max_wal_size in force) and says so, once, in a decision row,
# in walpilot.settings' source and in the recommendation's evidence.
# Once the DBA allows ALTER SYSTEM again walpilot raises max_wal_size: the
# refusal was all that held it.
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WalpilotTest qw(:DEFAULT dba_auto_conf slurp_bytes);

my $node = walpilot_node('asrefused', q{
log_checkpoints = on
checkpoint_timeout = 30s
max_wal_size = 32MB
min_wal_size = 32MB
walpilot.mode = 'tune'
walpilot.tune_commit_delay = off
walpilot.tune_checkpoint_flush = off
walpilot.tune_max_wal_size = on
walpilot.sample_interval = 10ms
});
my $pgdata = $node->data_dir;
my $autoconf = "$pgdata/postgresql.auto.conf";
my $record = "$pgdata/pg_walpilot/pgsql_tmp.max_wal_size";
my $dba_bytes = dba_auto_conf();
{
	open(my $fh, '>', $autoconf) or die;
	print $fh $dba_bytes;
	close $fh;
}
chmod 0400, $autoconf or die "chmod: $!";
$node->start;
my $version = $node->safe_psql('postgres', 'SHOW server_version_num');
$node->safe_psql('postgres', q{
	CREATE EXTENSION walpilot;
	CREATE TABLE t (id int PRIMARY KEY, v int, pad text) WITH (fillfactor = 50);
	INSERT INTO t SELECT g, 0, repeat('x', 900) FROM generate_series(1, 20000) g;
});

sub auto_conf { return slurp_bytes($autoconf) // ''; }
sub mode_of { return sprintf('%04o', (stat($autoconf))[2] & 07777); }
sub ticks { return $node->safe_psql('postgres', 'SELECT ticks FROM walpilot.status'); }

# bulk updates, 10 a second: several MB of WAL a second, a checkpoint by
# WAL volume every few seconds at 32MB
my $bulk = $node->basedir . '/bulk.sql';
{
	open(my $fh, '>', $bulk) or die;
	print $fh "\\set a random(1, 19500)\nUPDATE t SET v = v + 1 WHERE id BETWEEN :a AND :a + 400;\n";
	close $fh;
}
my ($out, $err);
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '900', '-R', '10',
	  '-f', $bulk, $node->connstr('postgres') ],
	'>', \$out, '2>', \$err);

# the max_wal_size decision rows, as text (for a diagnosis)
sub decisions
{
	return $node->safe_psql('postgres', q{
		SELECT string_agg(decided_at || ' ' || old_value || ' -> ' || new_value || ': ' || reason, E'\n' ORDER BY decided_at)
		  FROM walpilot.decisions WHERE setting = 'max_wal_size'});
}

# walpilot holds for $why: one decision row, nothing written, and
# walpilot.settings and the recommendation say so
sub holds
{
	my ($what, $why) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $reason = "held: $why";
	(my $sql_reason = $reason) =~ s/'/''/g;
	my $rows = qq{SELECT count(*) FROM walpilot.decisions
				   WHERE setting = 'max_wal_size' AND reason = '$sql_reason'};
	wait_until("$what: a decision row says walpilot holds", 240,
		sub { $node->safe_psql('postgres', $rows) eq '1' })
	  or diag(decisions());
	is($node->safe_psql('postgres', qq{
		SELECT old_value || '|' || new_value || '|' || (evidence ->> 'max_wal_size_mb')
		  FROM walpilot.decisions WHERE setting = 'max_wal_size' AND reason = '$sql_reason'}),
		'-|-|32', "$what: the row changes nothing");
	cmp_ok($node->safe_psql('postgres', qq{
		SELECT least((evidence ->> 'recommended_mb')::float8, (evidence ->> 'bound_mb')::float8)
		  FROM walpilot.decisions WHERE setting = 'max_wal_size' AND reason = '$sql_reason'}),
		'>', 32, "$what: its evidence has the raise it holds back, above the DBA's 32MB");
	like($node->safe_psql('postgres', q{
		SELECT configured_value || '|' || effective_value || '|' || managed_by || '|' || source
		  FROM walpilot.settings WHERE name = 'max_wal_size'}),
		qr/^32MB\|32MB\|default\|configuration file \(.*postgresql\.conf line \d+\); \Q$reason\E$/,
		"$what: walpilot.settings' source says why walpilot holds");
	is($node->safe_psql('postgres', q{
		SELECT coalesce(max(evidence ->> 'walpilot_holds'), 'no row')
		  FROM walpilot.recommendations WHERE setting = 'max_wal_size'}),
		$reason, "$what: the recommendation's evidence says why walpilot holds");
	my $t = ticks();
	# ten seconds of the worker's ticks (at most 100 a second): it weighs
	# max_wal_size every 5 s
	wait_until("$what: the worker has run ten more seconds", 100,
		sub { ticks() > $t + 1000 });
	is($node->safe_psql('postgres', $rows), '1', "$what: the hold is logged once");
	is(auto_conf(), $dba_bytes, "$what: postgresql.auto.conf is byte for byte the DBA's");
	ok(!-e $record, "$what: no record pg_walpilot/pgsql_tmp.max_wal_size");
	is($node->safe_psql('postgres', 'SHOW max_wal_size'), '32MB',
		"$what: the DBA's 32MB in force");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM walpilot.decisions
		 WHERE setting = 'max_wal_size' AND new_value NOT IN ('-', '(DBA''s)')}),
		'0', "$what: no decision changes max_wal_size");
}

# ---- postgresql.auto.conf read-only ----
holds('read-only',
	'postgresql.auto.conf is read-only: walpilot does not use ALTER SYSTEM');
is(mode_of(), '0400', 'read-only: the file keeps its mode');

# ---- allow_alter_system = off (17 and later) ----
SKIP:
{
	skip 'allow_alter_system exists from PostgreSQL 17 (wp_alter_system_allowed is true before)', 13
	  if $version < 170000;
	# allow_alter_system off first, then the file writable: walpilot never
	# sees ALTER SYSTEM allowed in between
	reload_worker($node, 'allow_alter_system = off', 'allow_alter_system = off');
	chmod 0600, $autoconf or die "chmod: $!";
	is($node->safe_psql('postgres', 'SHOW allow_alter_system'), 'off',
		'allow_alter_system = off: in force');
	holds('allow_alter_system = off',
		'allow_alter_system = off: walpilot does not use ALTER SYSTEM');
}

# ---- ALTER SYSTEM allowed again: walpilot raises ----
chmod 0600, $autoconf or die "chmod: $!";
reload_worker($node, 'allowed', $version >= 170000 ? 'allow_alter_system = on' : '');
ok($node->poll_query_until('postgres',
		q{SELECT pg_size_bytes(current_setting('max_wal_size')) > 32 * 1024 * 1024}),
	'allowed: walpilot raises max_wal_size')
  or diag(decisions());
like(auto_conf(), qr/^max_wal_size = '\d+[MG]B'$/m,
	'allowed: by ALTER SYSTEM, in postgresql.auto.conf');
ok(-e $record, 'allowed: with its record');

$load->kill_kill;
$node->stop;
done_testing();
