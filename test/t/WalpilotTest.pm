# Setup shared by walpilot's TAP tests: every test cluster (new_node and
# the nodes built on it: walpilot_node, emulated_node, server_settings_node),
# nodes with walpilot preloaded on the storage emulator, the background
# pgbench loads, the waits (poll_until, wait_until), building a small C
# probe module, the server settings tests' node (the DBA's own
# postgresql.auto.conf), waits and checks of the DBA's files, and what a
# test runs beside PostgreSQL::Test::Cluster (etcd, Patroni and the servers
# Patroni starts: free_port, start_daemon, server_at).  Every test uses it
# with
#
#	use FindBin;
#	use lib $FindBin::Bin;
#	use WalpilotTest;
#
# (the server settings tests: use WalpilotTest qw(:DEFAULT :server_settings))
# and makes no cluster of its own: test/check-tap-helper fails a test file
# that calls PostgreSQL::Test::Cluster->new or does not use this module.

package WalpilotTest;

use strict;
use warnings;
use Exporter 'import';
use File::Basename;
use HTTP::Tiny;
use IPC::Run;
use JSON::PP;
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

our @EXPORT =
  qw(emulator_library emulator_shim new_node walpilot_node start_emulated
  emulated_node set_emulated_flush checkpoint_trial_node shift_trial_node
  decision_rows
  pilot_state_within decision_within first_decision
  start_insert_load start_script_load poll_until poll_for wait_until
  wait_crash_restart build_probe_module reload_worker free_port find_program
  http_json start_daemon stop_daemons kill_daemon server_at);
our @EXPORT_OK = qw(server_settings_node dba_auto_conf slurp_bytes start_load
  stop_load wait_for_trial_value checkpoint_runs_with dba_snapshot
  dba_append_conf dba_write_conf dba_conf_bytes dba_files_unchanged
  decisions_text);
our %EXPORT_TAGS = (server_settings => \@EXPORT_OK);

# the test's number (030 for 030_pilot.pl), for names unique to it
my ($test_number) = basename($0) =~ /^(\d+)/;
$test_number //= 'tap';

my @shm_names;

# the storage emulator's shared library, undef when it is not built
sub emulator_library
{
	my ($so) = glob("$ENV{WALPILOT_SRC}/test/emulator/*.so");
	return defined $so && -f $so ? $so : undef;
}

# the same, skipping the whole test without it
sub emulator_shim
{
	my $so = emulator_library();
	plan skip_all => 'storage emulator not built (make -C test/emulator)'
	  unless defined $so;
	return $so;
}

# A test cluster, not started yet: the one place a test makes one.
#	init => { ... }		arguments of init (allows_streaming => 1,
#				extra => [ initdb options ]); default none
#	backup => [ $node, $backup_name, %params ]	a copy of that node's
#				backup (init_from_backup) instead of a new initdb
#	conf => '...'		postgresql.conf lines, appended as they are
sub new_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	if ($opt{backup})
	{
		$node->init_from_backup(@{ $opt{backup} });
	}
	else
	{
		$node->init(%{ $opt{init} // {} });
	}
	$node->append_conf('postgresql.conf', $opt{conf}) if defined $opt{conf};
	return $node;
}

# A node with walpilot preloaded and fsync on (flushes are what walpilot
# measures and tunes), not started yet.  $conf is more postgresql.conf
# lines; %opt as for new_node (init => ...).
sub walpilot_node
{
	my ($name, $conf, %opt) = @_;
	return new_node($name, %opt, conf => qq{
shared_preload_libraries = 'walpilot'
fsync = on
} . ($conf // '') . "\n");
}

# the name of $node's emulated device (its state file in /dev/shm)
sub emulated_device
{
	my ($node) = @_;
	return "walpilot-$test_number-" . $node->name . "-$$";
}

# Start $node with the storage emulator (when built) emulating $storage,
# in a shared state file of this node and run, removed at exit.
sub start_emulated
{
	my ($node, $storage) = @_;
	my $shim = emulator_library();
	my $shm = emulated_device($node);
	push @shm_names, $shm unless grep { $_ eq $shm } @shm_names;
	local $ENV{LD_PRELOAD} = $shim if defined $shim;
	local $ENV{WALPILOT_STORAGE} = "$storage,shm=$shm";
	$node->start;
}

# The emulated flush of $node (started by start_emulated) takes $us from now
# on, in every process (0: the profile's again): a volume whose latency
# changes under the running server.
sub set_emulated_flush
{
	my ($node, $us) = @_;
	PostgreSQL::Test::Utils::system_or_bail(
		"$ENV{WALPILOT_SRC}/test/emulator/emu_stat", emulated_device($node),
		'--set-flush-us', $us);
}

# A started walpilot_node on the emulated $storage, with the extension and
# an insert table t.
sub emulated_node
{
	my ($name, $storage, $conf) = @_;
	emulator_shim();
	my $node = walpilot_node($name, $conf);
	start_emulated($node, $storage);
	$node->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (id bigserial, v int);
});
	return $node;
}

# A started emulated_node on which both pilots have trials to run: tune
# mode, slow data writes and a slow flush, a checkpoint every 30 s.
sub checkpoint_trial_node
{
	my ($name) = @_;
	return emulated_node($name, 'hdd,bw_mbps=10,wal_bw_mbps=150', qq{
walpilot.mode = 'tune'
checkpoint_timeout = 30s
checkpoint_completion_target = 0.9
max_wal_size = 1GB
log_checkpoints = on
max_connections = 40
});
}

# A started emulated_node on which only the commit_delay pilot tunes, on a
# 20 ms flush, with an hour between periodic searches: a new search there
# comes from a shift of the load.
sub shift_trial_node
{
	my ($name) = @_;
	return emulated_node($name, 'hdd,flush_us=20000', qq{
walpilot.mode = 'tune'
walpilot.tune_checkpoint_flush = off
walpilot.tune_interval = '1h'
max_connections = 40
});
}

# $node's decision rows, one line each, for a failing test's diag ($setting:
# that pilot's only)
sub decision_rows
{
	my ($node, $setting) = @_;
	my $where = defined $setting ? "WHERE setting = '$setting'" : '';
	return $node->safe_psql('postgres', qq{
	SELECT string_agg(concat_ws(' | ', decided_at, setting, old_value, new_value, reason, outcome), E'\n' ORDER BY decided_at)
	  FROM walpilot.decisions $where});
}

# Whether $pilot's state (walpilot.pilots) is $state within $secs seconds
sub pilot_state_within
{
	my ($node, $pilot, $state, $secs) = @_;
	return poll_for($node, qq{
	SELECT state = '$state' FROM walpilot.pilots WHERE pilot = '$pilot'}, $secs);
}

# Whether a decision row of $setting whose reason is LIKE $like comes within
# $secs seconds; the first such row's reason
sub decision_within
{
	my ($node, $setting, $like, $secs) = @_;
	$like =~ s/'/''/g;
	return poll_for($node, qq{
	SELECT count(*) > 0 FROM walpilot.decisions
	 WHERE setting = '$setting' AND reason LIKE '$like'}, $secs);
}

sub first_decision
{
	my ($node, $setting, $like) = @_;
	$like =~ s/'/''/g;
	return $node->safe_psql('postgres', qq{
	SELECT reason FROM walpilot.decisions
	 WHERE setting = '$setting' AND reason LIKE '$like'
	 ORDER BY decided_at LIMIT 1});
}

# the emulator's state files of this run
END { unlink map { "/dev/shm/$_" } @shm_names; }

# an insert-only pgbench load on table t in the background ($jobs: 2;
# $rate: transactions per second in all, pgbench -R; none: as fast as the
# clients go)
sub start_insert_load
{
	my ($node, $clients, $seconds, $jobs, $rate) = @_;
	return start_script_load($node, "INSERT INTO t (v) VALUES (1);\n",
		$clients, $seconds, $jobs, $rate);
}

# pgbench running the script $text (written beside the node, a file per
# call) the same way.
my $script_seq = 0;

sub start_script_load
{
	my ($node, $text, $clients, $seconds, $jobs, $rate) = @_;
	my $script = $node->basedir . '/load' . ++$script_seq . '.sql';
	open my $fh, '>', $script or die;
	print $fh $text;
	close $fh;
	my ($out, $err);
	return IPC::Run::start(
		[ 'pgbench', '-n', '-f', $script, '-c', $clients, '-j', $jobs // 2,
		  (defined $rate ? ('-R', $rate) : ()),
		  '-T', $seconds, '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', \$out, '2>', \$err);
}

# The one polling loop of these tests: $cond (a sub) every 0.2 s until it
# returns true, for at most $secs seconds (undef: PostgreSQL's
# timeout_default, poll_query_until's bound).  Whether it came; the forms
# below report it.
sub poll_loop
{
	my ($secs, $cond) = @_;
	$secs //= $PostgreSQL::Test::Utils::timeout_default;
	my $end = time() + $secs;
	my $done = $cond->();
	while (!$done && time() < $end)
	{
		select(undef, undef, undef, 0.2);
		$done = $cond->();
	}
	return $done;
}

# Wait for $cond before the checks that need it: no test of its own when it
# comes, a failing test "timed out after N s waiting for: $what" when it
# does not (never a silent pass).  Returns whether it came.
sub poll_until
{
	my ($what, $secs, $cond) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	$secs //= $PostgreSQL::Test::Utils::timeout_default;
	return 1 if poll_loop($secs, $cond);
	fail("timed out after $secs s waiting for: $what");
	return 0;
}

# a query that returns 't', at most $secs seconds: for ok(poll_for(...),
# $what), whose test fails when it does not come
sub poll_for
{
	my ($node, $query, $secs) = @_;
	return poll_loop($secs,
		sub { $node->safe_psql('postgres', $query) eq 't' });
}

# After a SIGKILL of a child ($offset: the log's size before it), wait until
# the postmaster has reinitialised and accepts connections.  Polling with
# psql meanwhile can die: psql exits at once ("the database system is in
# recovery mode"), and IPC::Run, writing the query to its stdin, raises the
# EPIPE as an error that poll_query_until does not catch.
sub wait_crash_restart
{
	my ($node, $offset) = @_;
	$node->wait_for_log(
		qr/all server processes terminated; reinitializing.*database system is ready to accept connections/s,
		$offset);
	return;
}

# build $name.so from C source in the node's base directory; returns its path
sub build_probe_module
{
	my ($node, $name, $source) = @_;
	my $dir = $node->basedir;
	open my $fh, '>', "$dir/$name.c" or die;
	print $fh $source;
	close $fh;
	my $incdir = `pg_config --includedir-server`;
	chomp $incdir;
	my ($cout, $cerr);
	IPC::Run::run([ 'cc', '-shared', '-fPIC', '-O1', "-I$incdir",
			'-o', "$dir/$name.so", "$dir/$name.c" ],
		'>', \$cout, '2>', \$cerr)
	  or BAIL_OUT("cannot build the probe module: $cerr");
	return "$dir/$name.so";
}

#
# The server settings tests: checkpoint_flush_after tuned between 256kB and
# 512kB.  walpilot applies its value in the checkpointer's own memory when
# the checkpointer logs "checkpoint starting" (log_checkpoints = on), below
# every source of the DBA's: no file is written, nothing is reloaded.  What
# ran is in walpilot.checkpoints (flush_after_kb: the value in force when
# that checkpoint started) and walpilot.settings (the checkpointer's value
# at its last checkpoint start, and whose it is); SHOW in a session shows
# the configuration.  The node starts with the DBA's own
# postgresql.auto.conf; the helpers below check that the DBA's files stay
# exactly theirs.  fsync is on: with fsync = off the server skips
# checkpoint_flush_after's writeback requests, and the pilot does not tune
# it.
#

# an ALTER SYSTEM line, a hand-written comment and a hand-written line
# without the final newline
my $dba_bytes = "# Do not edit this file manually!\n"
  . "# It will be overwritten by the ALTER SYSTEM command.\n"
  . "work_mem = '8MB'\n"
  . "# the DBA's own note\n"
  . "maintenance_work_mem='100MB'";

my ($ss_node, $ss_tmp, $ss_load);

# the DBA's configuration files as the DBA last left them: name => [bytes,
# "inode mtime size"]
my %dba_files;

sub dba_auto_conf { return $dba_bytes; }

sub slurp_bytes
{
	my ($path) = @_;
	open(my $f, '<', $path) or return undef;
	binmode $f;
	local $/;
	my $b = <$f>;
	close $f;
	return $b;
}

sub auto_conf_path { return $ss_node->data_dir . '/postgresql.auto.conf'; }

# a file's identity: a rewrite with the same bytes is a new inode or a new
# modification time
sub file_identity
{
	my ($path) = @_;
	my @st = stat($path) or return 'absent';
	return "$st[1] $st[9] $st[7]";
}

# What the DBA's postgresql.conf and postgresql.auto.conf are now: called
# after each change the test makes as the DBA.
sub dba_snapshot
{
	for my $f ('postgresql.conf', 'postgresql.auto.conf')
	{
		my $path = $ss_node->data_dir . "/$f";
		$dba_files{$f} = [ slurp_bytes($path), file_identity($path) ];
	}
	return;
}

# The DBA appends $text (whole lines) to postgresql.conf, without a
# reload; returns the number of the last line of $text in the file (the
# line a setting appended last is reported from: append_conf adds an empty
# line after it).
sub dba_append_conf
{
	my ($text) = @_;
	my $before = () = $dba_files{'postgresql.conf'}[0] =~ /\n/g;
	my $added = () = $text =~ /\n/g;
	$ss_node->append_conf('postgresql.conf', $text);
	dba_snapshot();
	return $before + $added;
}

# The DBA writes postgresql.conf whole (to take a line out again).
sub dba_write_conf
{
	my ($bytes) = @_;
	my $path = $ss_node->data_dir . '/postgresql.conf';
	open(my $fh, '>', $path) or die "cannot write $path: $!";
	print $fh $bytes;
	close $fh;
	dba_snapshot();
	return;
}

sub dba_conf_bytes { return $dba_files{'postgresql.conf'}[0]; }

# postgresql.conf and postgresql.auto.conf are byte for byte what the DBA
# left and were not rewritten, and pg_walpilot/ holds nothing for
# checkpoint_flush_after (the old route's record, saved file and release
# file; with walpilot.tune_max_wal_size off it holds nothing at all).
# Reads the files only: also for a node that is down.
sub dba_files_unchanged
{
	my ($what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $dir = $ss_node->data_dir;
	my @diffs;
	for my $f (sort keys %dba_files)
	{
		my $bytes = slurp_bytes("$dir/$f");
		my $id = file_identity("$dir/$f");
		push @diffs, "$f: " . (defined $bytes ? "now\n$bytes" : 'missing')
		  unless defined $bytes && $bytes eq $dba_files{$f}[0];
		push @diffs, "$f: rewritten ($dba_files{$f}[1] -> $id)"
		  if $id ne $dba_files{$f}[1];
	}
	ok(!@diffs, "$what: postgresql.conf and postgresql.auto.conf are the DBA's, byte for byte, never rewritten")
	  or diag(join("\n", @diffs));
	my @state = -d "$dir/pg_walpilot"
	  ? grep { !/^\.\.?$/ } do { opendir(my $d, "$dir/pg_walpilot"); readdir $d }
	  : ();
	ok(!@state, "$what: no walpilot state in pg_walpilot/")
	  or diag("pg_walpilot/: @state");
	return;
}

# the started node (one per test: the helpers below act on it), with the
# DBA's postgresql.auto.conf, a table t for bulk updates and a table small
# for small inserts; $conf is more postgresql.conf lines of the DBA's
sub server_settings_node
{
	my ($name, $conf) = @_;
	$ss_node = walpilot_node($name, q{
restart_after_crash = on
log_checkpoints = on
checkpoint_timeout = 30s
max_wal_size = 32MB
min_wal_size = 32MB
walpilot.mode = 'tune'
walpilot.tune_commit_delay = off
walpilot.tune_interval = 10s
walpilot.checkpoint_flush_after_min = 256kB
walpilot.checkpoint_flush_after_max = 512kB
} . ($conf // ''));
	open(my $fh, '>', auto_conf_path()) or die;
	print $fh $dba_bytes;
	close $fh;
	dba_snapshot();

	$ss_node->start;
	$ss_node->safe_psql('postgres', q{
	CREATE EXTENSION walpilot;
	CREATE TABLE t (id int PRIMARY KEY, v int, pad text) WITH (fillfactor = 50);
	INSERT INTO t SELECT g, 0, repeat('x', 900) FROM generate_series(1, 20000) g;
	CREATE TABLE small (id bigserial, v int);
});

	$ss_tmp = PostgreSQL::Test::Utils::tempdir;
	open($fh, '>', "$ss_tmp/small.sql") or die;
	print $fh "INSERT INTO small (v) VALUES (1);\n";
	close $fh;
	open($fh, '>', "$ss_tmp/bulk.sql") or die;
	print $fh "\\set a random(1, 19500)\nUPDATE t SET v = v + 1 WHERE id BETWEEN :a AND :a + 400;\n";
	close $fh;
	return $ss_node;
}

# small inserts with a few bulk updates: checkpoints with dirty buffers
sub start_load
{
	my ($out, $err);
	$ss_load = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-j', '2', '-T', '900', '-R', '80',
		  '-f', "$ss_tmp/small.sql\@94", '-f', "$ss_tmp/bulk.sql\@6",
		  $ss_node->connstr('postgres') ],
		'>', \$out, '2>', \$err);
}

sub stop_load
{
	return unless $ss_load;
	$ss_load->kill_kill;
	$ss_load = undef;
}

# Wait until walpilot's trial value is in force: a checkpoint that started
# with 512kB is running (the pilot changes its value only when a
# checkpoint has ended, so 512kB stays the value to apply until this one
# ends), and walpilot.settings says that 512kB is walpilot's.
sub wait_for_trial_value
{
	my ($what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $ok = poll_for($ss_node, q{
	SELECT w.managed_by = 'walpilot' AND w.effective_value = '512kB'
	   AND c.flush_after_kb = 512 AND c.finished_at IS NULL
	  FROM walpilot.settings w,
	       (SELECT * FROM walpilot.checkpoints ORDER BY started_at DESC LIMIT 1) c
	 WHERE w.name = 'checkpoint_flush_after'}, 480);
	ok($ok, "$what: a checkpoint runs with walpilot's 512kB")
	  or diag("decisions:\n" . decisions_text());
	return $ok;
}

# CHECKPOINT, and every checkpoint that started while it ran (the one it
# asked for, and any other) ran with $kb: what the checkpointer has in
# force now.
sub checkpoint_runs_with
{
	my ($what, $kb) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $from = $ss_node->safe_psql('postgres', 'SELECT clock_timestamp()');
	$ss_node->safe_psql('postgres', 'CHECKPOINT');
	my $ran = $ss_node->safe_psql('postgres', qq{
	SELECT coalesce(string_agg(DISTINCT flush_after_kb::text, ' '), 'none')
	  FROM walpilot.checkpoints
	 WHERE started_at >= '$from' AND started_at <= clock_timestamp()});
	is($ran, "$kb", "$what: the next checkpoint runs with ${kb}kB");
	return $ran eq "$kb";
}

# the flush pilot's decision rows as text, for a diagnosis (also when the
# extension has just been dropped)
sub decisions_text
{
	my ($rc, $out, $err) = $ss_node->psql('postgres',
		"SELECT string_agg(decided_at || ' ' || reason || coalesce(' => ' || outcome, ''), E'\\n' ORDER BY decided_at) FROM walpilot.decisions WHERE setting = 'checkpoint_flush_after'");
	return $rc == 0 ? $out : "(walpilot.decisions cannot be read: $err)";
}

# The wait that is itself a check: poll $cond as poll_until does, a test
# named $what that passes when it came and fails saying so when it did not
# (instead of a fixed sleep).  Returns whether it came.
sub wait_until
{
	my ($what, $secs, $cond) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	$secs //= $PostgreSQL::Test::Utils::timeout_default;
	my $done = poll_loop($secs, $cond);
	ok($done, $what) or diag("timed out after $secs s waiting for: $what");
	return $done;
}

# Append $conf to postgresql.conf, reload, and wait until the worker has
# reloaded: each reload also flips walpilot.sample_interval between 10ms
# and 11ms, which walpilot.status shows once the worker runs with it.
my %reload_interval;

sub reload_worker
{
	my ($node, $what, $conf) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $i = $reload_interval{ $node->name } =
	  ($reload_interval{ $node->name } // 10) == 10 ? 11 : 10;
	$node->append_conf('postgresql.conf',
		($conf // '') . "\nwalpilot.sample_interval = ${i}ms\n");
	$node->reload;
	return wait_until("$what: the worker has reloaded", 60, sub {
		$node->safe_psql('postgres', 'SELECT sample_interval_ms FROM walpilot.status') == $i;
	});
}

#
# Programs and servers a test runs outside PostgreSQL::Test::Cluster (etcd,
# Patroni and the servers Patroni starts): free ports, programs in the
# background stopped when the test exits (also when it dies), and a handle
# with the Cluster methods the tests use for a server at a host and port.
#

# a free TCP port on 127.0.0.1, reserved for this test as a node's port is
sub free_port
{
	return PostgreSQL::Test::Cluster::get_free_port();
}

# the path of program $name in PATH, undef when there is none
sub find_program
{
	my ($name) = @_;
	for my $dir (split /:/, $ENV{PATH} // '')
	{
		return "$dir/$name" if $dir ne '' && -f "$dir/$name" && -x _;
	}
	return undef;
}

# GET $url and decode its JSON body; undef when it cannot
sub http_json
{
	my ($url) = @_;
	my $res = HTTP::Tiny->new(timeout => 5)->get($url);
	return undef unless $res->{success} || ($res->{status} // 0) == 503;
	my $v = eval { JSON::PP::decode_json($res->{content}) };
	return ref $v eq 'HASH' ? $v : undef;
}

# the programs start_daemon started, in order: { name, pid, group, after }
my @daemons;

# Start @$cmd in the background, its standard output and error appended to
# $log, in a process group of its own.  It is stopped by stop_daemons or
# when the test exits, whatever the way.  %opt:
#	group => NAME	programs of one group stop together (their TERM sent
#			at once): two Patroni nodes, whose leader must not fail
#			over to the other while it stops
#	after => SUB	run once it is stopped (a server it left behind)
sub start_daemon
{
	my ($name, $log, $cmd, %opt) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		setpgrp(0, 0);
		open(STDIN, '<', '/dev/null');
		open(STDOUT, '>>', $log) or POSIX::_exit(126);
		open(STDERR, '>&', \*STDOUT) or POSIX::_exit(126);
		exec(@$cmd) or POSIX::_exit(127);
	}
	push @daemons,
	  { name => $name, pid => $pid, group => $opt{group} // $name,
		after => $opt{after} };
	note("started $name (pid $pid): @$cmd");
	# a TERM or INT from the harness still runs the END blocks
	$SIG{TERM} = $SIG{INT} = sub { die "killed by signal $_[0]\n" };
	return $pid;
}

# Stop the named programs (all when none is named): TERM at once, KILL to
# their process group after $daemon_stop_s seconds, then each one's after.
my $daemon_stop_s = 60;

sub stop_daemons
{
	my @names = @_;
	my @stop = grep {
		my $d = $_;
		$d->{pid} && (!@names || grep { $_ eq $d->{name} } @names)
	} @daemons;
	kill 'TERM', $_->{pid} for @stop;
	my $end = time() + $daemon_stop_s;
	for my $d (@stop)
	{
		while (waitpid($d->{pid}, POSIX::WNOHANG()) == 0)
		{
			if (time() > $end)
			{
				kill 'KILL', -$d->{pid};
				waitpid($d->{pid}, 0);
				last;
			}
			select(undef, undef, undef, 0.2);
		}
		note("stopped $d->{name} (pid $d->{pid})");
		$d->{pid} = 0;
	}
	$_->{after} && $_->{after}->() for @stop;
	return;
}

# Kill the named program and its process group at once (KILL: a node
# that crashes), then its after.
sub kill_daemon
{
	my ($name) = @_;
	for my $d (grep { $_->{pid} && $_->{name} eq $name } @daemons)
	{
		kill 'KILL', -$d->{pid};
		waitpid($d->{pid}, 0);
		note("killed $d->{name} (pid $d->{pid})");
		$d->{pid} = 0;
		$d->{after}->() if $d->{after};
	}
	return;
}

# what is still running at exit stops, the last started first, one group
# at a time; the test's exit status stays
END
{
	my $status = $?;
	for my $d (reverse @daemons)
	{
		next unless $d->{pid};
		my $g = $d->{group};
		stop_daemons(map { $_->{name} } grep { $_->{group} eq $g } @daemons);
	}
	$? = $status;
}

# A server this test did not make (Patroni's, say) at $host:$port, with
# the PostgreSQL::Test::Cluster methods the helpers and tests use: name,
# host, port, basedir (a directory of the test's for files such as a
# pgbench script), connstr, psql, safe_psql, poll_query_until.
sub server_at
{
	my ($name, $host, $port, $basedir) = @_;
	return bless { name => $name, host => $host, port => $port,
		basedir => $basedir }, 'WalpilotTest::Server';
}

package WalpilotTest::Server;

use IPC::Run;
use PostgreSQL::Test::Utils;

sub name { return $_[0]{name}; }
sub host { return $_[0]{host}; }
sub port { return $_[0]{port}; }
sub basedir { return $_[0]{basedir}; }

sub connstr
{
	my ($self, $dbname) = @_;
	return "host=$self->{host} port=$self->{port} dbname=" . ($dbname // 'postgres');
}

# ($rc, $stdout, $stderr) of $sql in psql; $rc is psql's exit status (2:
# no connection, 3: an error)
sub psql
{
	my ($self, $dbname, $sql) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run(
			[ 'psql', '-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1',
			  '-d', $self->connstr($dbname), '-f', '-' ],
			'<', \$sql, '>', \$out, '2>', \$err,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
		1;
	};
	my $rc = $ok ? $? >> 8 : 2;
	$err .= $@ unless $ok;
	$out =~ s/\r?\n$//;
	return ($rc, $out, $err);
}

sub safe_psql
{
	my ($self, $dbname, $sql) = @_;
	my ($rc, $out, $err) = $self->psql($dbname, $sql);
	die "psql on $self->{name} failed (exit $rc): $err\nquery: $sql" if $rc != 0;
	return $out;
}

# $query returns 't' within $PostgreSQL::Test::Utils::timeout_default
# seconds; a failing connection is retried (the server may be restarting)
sub poll_query_until
{
	my ($self, $dbname, $query) = @_;
	return WalpilotTest::poll_loop(undef, sub {
		my ($rc, $out) = $self->psql($dbname, $query);
		return $rc == 0 && $out eq 't';
	});
}

package WalpilotTest;

1;
