# Fuzzing the SQL surface: random calls of every walpilot function and
# view and random values of every walpilot.* setting (ALTER SYSTEM +
# reload), from two sessions at once, concurrent with a pgbench write load,
# for FUZZ_SECONDS (60 by default; FUZZ_SEED repeats a run).  Every call
# must end in a result or an ordinary error; the server must never crash
# or restart, the worker never die, and the configuration must come back
# byte-for-byte.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $seconds = $ENV{FUZZ_SECONDS} // 60;
my $seed = $ENV{FUZZ_SEED} // time;
srand($seed);
note("fuzz seed $seed, $seconds s");

my $node = walpilot_node('fuzz', 'max_connections = 40');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walpilot; CREATE TABLE t (v int)');
my $auto_conf = $node->data_dir . '/postgresql.auto.conf';
my $auto_before = slurp_file($auto_conf);
my $pm_start = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

sub pick { return $_[ int(rand(@_)) ]; }

sub rand_string
{
	my @pieces = ('fsync', 'fdatasync', 'open_sync', 'open_datasync',
		'fsync_writethrough', "'", '"', '\\', ';', '--', '%s', '%n', ' ', '',
		"\xe9", "\xf0\x9f\x98\x80", 'x' x int(rand(300)), 'NULL', 'DROP TABLE t',
		int(rand(1e9)), '-', '{', '}', ',');
	my $s = join('', map { pick(@pieces) } 1 .. 1 + int(rand(3)));
	$s =~ s/'/''/g;
	return "'$s'";
}

sub rand_number
{
	return pick('NULL', "'NaN'", "'Infinity'", "'-Infinity'", '0', '-0', '-1',
		'1e308', '-1e308', '1e-308', '2147483648', '-2147483649',
		'9223372036854775808', sprintf('%.6f', rand(0.15)), int(rand(100000)),
		-int(rand(100000)), sprintf('%.3f', rand(700) - 50));
}

sub rand_value { return rand() < 0.5 ? rand_number() : rand_string(); }

sub rand_array
{
	my $r = rand();
	return 'NULL' if $r < 0.2;
	return "'{}'" if $r < 0.25;
	return 'ARRAY[NULL]::text[]' if $r < 0.3;
	return rand_string() if $r < 0.35;
	my @m = map { pick("'fdatasync'", "'fsync'", "'open_datasync'", "'open_sync'",
			"'fsync_writethrough'", rand_string()) } 1 .. 1 + int(rand(3));
	return 'ARRAY[' . join(',', @m) . ']';
}

my @views = qw(status wait_profile commit_latency timeline commit_groups storage checkpoints
  decisions settings);
my @data_fns = qw(status_data_0_2 wait_profile_data commit_latency_data timeline_data_0_2 commit_groups_data
  storage_data checkpoints_data decisions_data settings_data
  recommendations_data setting_errors_data report);
my %gucs = (
	'walpilot.mode' => [ "'off'", "'observe'", "'tune'" ],
	'walpilot.sample_interval' => [ '1', '10', "'50ms'", '1000' ],
	'walpilot.history_size' => [ '60', "'1h'" ],
	'walpilot.tune_checkpoint_flush' => [ 'on', 'off' ],
	'walpilot.checkpoint_flush_after_min' => [ '0', "'64kB'" ],
	'walpilot.checkpoint_flush_after_max' => [ "'256kB'", "'2MB'" ],
	'walpilot.tune_commit_delay' => [ 'on', 'off' ],
	'walpilot.commit_delay_max' => [ '0', '100', '100000' ],
	'walpilot.max_latency_regression' => [ '0', '10', '1000' ],
	'walpilot.tune_interval' => [ '10', "'1d'" ],
	'walpilot.probe_interval' => [ '0', '10' ],
);

sub rand_statement
{
	my $r = rand();
	if ($r < 0.08)
	{
		# probes: short, sometimes cut short by a statement timeout
		my $sec = rand() < 0.7 ? sprintf('%.3f', rand(0.1)) : rand_number();
		my $timeout = rand() < 0.3 ? 'SET statement_timeout = ' . (1 + int(rand(50))) . ";\n" : '';
		return $timeout . "SELECT count(*) FROM walpilot.probe($sec, " . rand_array()
		  . ");\nSET statement_timeout = '5s';";
	}
	return 'SELECT walpilot.reset();' if $r < 0.15;
	return 'SELECT walpilot.revert();' if $r < 0.20;
	return 'SELECT count(*) FROM walpilot.' . pick(@views) . ';' if $r < 0.45;
	return 'SELECT count(*) FROM walpilot.' . pick(@data_fns) . '();' if $r < 0.55;
	if ($r < 0.62)
	{
		my @args = map { rand_value() } 1 .. 1 + int(rand(3));
		return 'SELECT walpilot.' . pick(@data_fns, 'reset', 'revert', 'probe')
		  . '(' . join(', ', @args) . ');';
	}
	if ($r < 0.85)
	{
		my $g = pick(sort keys %gucs);
		my $v = rand() < 0.5 ? pick(@{ $gucs{$g} }) : rand_value();
		return "ALTER SYSTEM SET $g = $v;\nSELECT pg_reload_conf();";
	}
	if ($r < 0.90)
	{
		return 'SET ' . pick(sort keys %gucs) . ' = ' . rand_value() . ';';
	}
	return 'SELECT walpilot.probe(' . rand_value() . ', ' . rand_value() . ');';
}

# the write load
my $script = $node->basedir . '/insert.sql';
open my $fh, '>', $script or die;
print $fh "INSERT INTO t VALUES (1);\n";
close $fh;
my ($lout, $lerr) = ('', '');
my $load = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $script, '-c', 4, '-j', 2, '-T', $seconds + 5,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$lout, '2>', \$lerr);

my %sqlstates;
my ($calls, $batches, $lost) = (0, 0, 0);
# batches for $seconds: the run's length, not a wait for a condition
my $deadline = time + $seconds;
while (time < $deadline)
{
	my @h;
	foreach my $session (1 .. 2)
	{
		my $file = $node->basedir . "/fuzz$session.sql";
		open my $f, '>', $file or die;
		# every call is bounded: a valid probe may ask for up to 600 s
		print $f "\\set VERBOSITY sqlstate\nSET statement_timeout = '5s';\n";
		foreach (1 .. 100)
		{
			print $f rand_statement(), "\n";
			$calls++;
		}
		close $f;
		my ($o, $e) = ('', '');
		push @h, [ IPC::Run::start(
			[ 'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-f', $file ],
			'>', \$o, '2>', \$e, IPC::Run::timeout(120)), \$e ];
	}
	foreach my $x (@h)
	{
		$x->[0]->finish;
		my $e = ${ $x->[1] };
		$sqlstates{$1}++ while $e =~ /(?:ERROR|FATAL|PANIC):\s+([0-9A-Z]{5})/g;
		$lost++ if $e =~ /server closed the connection|connection to server was lost|terminating connection/;
		$batches++;
	}
}
$load->finish;
my $summary = join(', ', map { "$_ x$sqlstates{$_}" } sort keys %sqlstates);
note("$calls calls in $batches batches; errors by SQLSTATE: $summary");
diag("fuzz: $calls calls in $seconds s (seed $seed); errors by SQLSTATE: $summary");

cmp_ok($calls, '>', 0, "$calls random calls made");
is($lost, 0, 'no session lost its connection');
is(join(',', grep { /^(XX|58|53|08)/ } sort keys %sqlstates), '',
	'no internal, system, resource or connection error among the SQLSTATEs');
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $pm_start,
	'the server never restarted');
unlike(slurp_file($node->logfile), qr/PANIC|was terminated by signal|TRAP:|(?:server process|client backend) .* exited with exit code [^0]/,
	'no crash in the log');
is($node->safe_psql('postgres', 'SELECT worker_starts FROM walpilot.status'), '1',
	'the worker never died');
like($lout, qr/number of failed transactions: 0 /, 'the write load never failed');

# put every setting back: the configuration is as it was
$node->safe_psql('postgres', join("\n", map { "ALTER SYSTEM RESET $_;" } sort keys %gucs)
	  . "\nSELECT pg_reload_conf();");
is(slurp_file($auto_conf), $auto_before, 'postgresql.auto.conf back to its bytes');
ok($node->poll_query_until('postgres',
		q{SELECT mode = 'observe' AND worker_pid IS NOT NULL FROM walpilot.status}),
	'the worker runs with the defaults again');
is($node->safe_psql('postgres', q{SELECT current_setting('commit_delay')}), '0',
	'no commit_delay left behind');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_ls_waldir() WHERE name LIKE 'walpilot_probe%'"),
	'0', 'no probe file left');

$node->stop;
done_testing();
