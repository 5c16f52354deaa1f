# walpilot under Patroni: one etcd and two Patroni nodes side by side,
# walpilot preloaded in tune mode through Patroni's postgresql.parameters.
# Once one node leads and the other streams from it, an insert load runs
# on the leader and patronictl switches the leader over to the replica.
# Then the new primary's worker runs and its pilots tune or say why not,
# the demoted node's pilots say it is a standby, no server log has a
# walpilot ERROR, FATAL or PANIC, and walpilot wrote nothing into the
# configuration files Patroni owns.  Then the new leader's node crashes:
# the replica is promoted, the crashed node rejoins (pg_rewind where its
# WAL diverged), and no choice of walpilot's crosses over.
use strict;
use warnings;
use File::Basename;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest qw(:DEFAULT slurp_bytes);

my ($patroni, $patronictl, $etcd) = map { find_program($_) } qw(patroni patronictl etcd);
plan skip_all => 'Patroni and etcd are not installed (apt-get install patroni etcd-server)'
  unless $patroni && $patronictl && $etcd;

my $standby_reason = 'standby: no trials during recovery';
my $bindir = `pg_config --bindir`;
chomp $bindir;
my $tmp = PostgreSQL::Test::Utils::tempdir('patroni');
my $sockdir = PostgreSQL::Test::Utils::tempdir_short();
my $logdir = $PostgreSQL::Test::Utils::log_path;
my $user = getpwuid($<);
my $test = basename($0, '.pl');

#
# one etcd member on free ports, its data in this test's directory
#
my ($etcd_port, $etcd_peer) = (free_port(), free_port());
start_daemon('etcd', "$logdir/${test}_etcd.log",
	[ $etcd, '--name', 'walpilot', '--data-dir', "$tmp/etcd",
	  '--listen-client-urls', "http://127.0.0.1:$etcd_port",
	  '--advertise-client-urls', "http://127.0.0.1:$etcd_port",
	  '--listen-peer-urls', "http://127.0.0.1:$etcd_peer",
	  '--initial-advertise-peer-urls', "http://127.0.0.1:$etcd_peer",
	  '--initial-cluster', "walpilot=http://127.0.0.1:$etcd_peer",
	  '--initial-cluster-state', 'new', '--logger', 'zap' ]);
wait_until('etcd is healthy', 60, sub {
	((http_json("http://127.0.0.1:$etcd_port/health") // {})->{health} // '') eq 'true';
}) or die 'etcd did not start';

#
# two Patroni nodes: PostgreSQL from this installation, walpilot in
# shared_preload_libraries and walpilot.mode = tune through
# postgresql.parameters, fsync on, each server log in the test's log
# directory
#
my %node;
for my $name (qw(node1 node2))
{
	my $dir = "$tmp/$name";
	mkdir $dir or die "mkdir $dir: $!";
	my $n = $node{$name} = {
		name => $name,
		data => "$dir/data",
		cfg => "$dir/patroni.yml",
		pg_port => free_port(),
		rest_port => free_port(),
		log => "$logdir/${test}_$name.log" };
	open my $fh, '>', $n->{cfg} or die;
	print $fh <<"EOF";
scope: walpilot-test
name: $name
restapi:
  listen: 127.0.0.1:$n->{rest_port}
  connect_address: 127.0.0.1:$n->{rest_port}
etcd3:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 2
    retry_timeout: 8
    maximum_lag_on_failover: 67108864
    postgresql:
      use_pg_rewind: true
  initdb:
    - encoding: UTF8
    - no-sync
postgresql:
  listen: 127.0.0.1:$n->{pg_port}
  connect_address: 127.0.0.1:$n->{pg_port}
  data_dir: $n->{data}
  bin_dir: $bindir
  pgpass: $dir/pgpass
  authentication:
    superuser:
      username: $user
      password: walpilot
    replication:
      username: replicator
      password: walpilot
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    shared_preload_libraries: walpilot
    walpilot.mode: tune
    fsync: 'on'
    unix_socket_directories: '$sockdir'
    logging_collector: 'on'
    log_directory: '$logdir'
    log_filename: '${test}_$name.log'
    log_rotation_age: 0
    log_rotation_size: 0
EOF
	close $fh;
	$n->{server} = server_at($name, '127.0.0.1', $n->{pg_port}, $dir);
}
sub start_patroni
{
	my ($n) = @_;
	start_daemon($n->{name}, "$logdir/${test}_$n->{name}_patroni.log",
		[ $patroni, $n->{cfg} ], group => 'patroni',
		after => sub { stop_postmaster($n->{data}) });
}
start_patroni($_) for map { $node{$_} } sort keys %node;

# the node's role from its REST API, '' while it does not run
sub role
{
	my ($n) = @_;
	my $s = http_json("http://127.0.0.1:$n->{rest_port}/patroni") // {};
	return '' unless ($s->{state} // '') eq 'running';
	return ($s->{role} // '') =~ /^(master|primary)$/ ? 'leader' : $s->{role} // '';
}

# $to streams from $from: $from's walsender says so
sub streams
{
	my ($from, $to) = @_;
	my ($rc, $out) = $from->{server}->psql('postgres', qq{
	SELECT count(*) FROM pg_stat_replication
	 WHERE application_name = '$to->{name}' AND state = 'streaming'});
	return $rc == 0 && $out eq '1';
}

my ($leader, $replica);
wait_until('one node leads and the other streams from it', 150, sub {
	my @l = grep { role($_) eq 'leader' } values %node;
	my @r = grep { role($_) eq 'replica' } values %node;
	return 0 unless @l == 1 && @r == 1 && streams($l[0], $r[0]);
	($leader, $replica) = ($l[0], $r[0]);
	return 1;
}) or die 'no leader with a streaming replica';
note("leader $leader->{name}, replica $replica->{name}");

my $primary = $leader->{server};
$primary->safe_psql('postgres',
	'CREATE EXTENSION walpilot; CREATE TABLE t (id bigserial, v int)');
ok($replica->{server}->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_extension WHERE extname = 'walpilot'}),
	'the extension is replayed on the replica');

# The pilots of $n say it is a standby: every pilot, and walpilot.status
# (the worker's first tick says so; 60 s is generous)
sub says_standby
{
	my ($n, $what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return wait_until($what, 60, sub {
		my ($rc, $out) = $n->{server}->psql('postgres', qq{
	SELECT pg_is_in_recovery()
	   AND (SELECT pilot_reason = '$standby_reason' FROM walpilot.status)
	   AND (SELECT bool_and(state = 'idle' AND reason = '$standby_reason')
	          FROM walpilot.pilots)});
		return $rc == 0 && $out eq 't';
	});
}
says_standby($replica, "the replica's pilots say it is a standby");

# the files Patroni owns, and the lines of postgresql.conf that set
# walpilot or a setting it tunes (Patroni rewrites the others when a node
# changes role)
my $walpilot_line =
  qr/^\s*(shared_preload_libraries|walpilot\.\w+|commit_delay|commit_siblings|checkpoint_flush_after|max_wal_size)\s*=/;

sub owned_files
{
	my ($n) = @_;
	my %f = map { $_ => slurp_bytes("$n->{data}/$_") }
	  qw(postgresql.base.conf postgresql.auto.conf);
	$f{'patroni.yml'} = slurp_bytes($n->{cfg});
	$f{'the walpilot lines of postgresql.conf'} = join '',
	  grep { /$walpilot_line/ } split /^/m,
	  slurp_bytes("$n->{data}/postgresql.conf") // '';
	return \%f;
}
my %before = map { $_->{name} => owned_files($_) } values %node;
is($before{ $leader->{name} }{'the walpilot lines of postgresql.conf'},
	"shared_preload_libraries = 'walpilot'\nwalpilot.mode = 'tune'\n",
	'Patroni wrote walpilot into postgresql.conf from postgresql.parameters');

#
# an insert load on the leader, then the switchover while it runs
#
my $load = start_insert_load($primary, 8, 150);
ok($primary->poll_query_until('postgres',
		'SELECT count(*) >= 5 FROM walpilot.timeline WHERE commits > 0'),
	'the leader\'s walpilot sees the load');

my ($out, $err) = ('', '');
my $switched = IPC::Run::run(
	[ $patronictl, '-c', $leader->{cfg}, 'switchover', '--leader', $leader->{name},
	  '--candidate', $replica->{name}, '--force' ],
	'>', \$out, '2>', \$err, IPC::Run::timeout(150));
ok($switched, "patronictl switchover from $leader->{name} to $replica->{name}")
  or diag("$out\n$err");
$load->kill_kill;

my ($new, $old) = ($replica, $leader);
wait_until("$new->{name} leads and $old->{name} streams from it", 150, sub {
	role($new) eq 'leader' && role($old) eq 'replica' && streams($new, $old);
}) or die 'the switchover did not complete';

#
# (a) the new primary's worker runs, and its pilots tune or say why not
#
my $np = $new->{server};
my $promoted = $np->safe_psql('postgres', 'SELECT now()');
$load = start_insert_load($np, 8, 60);
ok($np->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	 WHERE backend_type = 'walpilot worker' AND query = 'walpilot worker'}),
	'the new primary\'s worker runs, no longer observe only');
is($np->safe_psql('postgres', 'SELECT mode, worker_pid IS NOT NULL FROM walpilot.status'),
	'tune|t', 'its walpilot.status: tune mode, a worker');
like(slurp_file($new->{log}), qr/walpilot worker: the server was promoted/,
	'the worker that ran on the replica carried on after the promotion');
ok($np->poll_query_until('postgres', qq{
	SELECT count(*) >= 3 FROM walpilot.timeline
	 WHERE ts > '$promoted' AND commits > 0}),
	'the new primary\'s walpilot sees the load');
ok($np->poll_query_until('postgres', q{
	SELECT reason !~ '^(standby|starting|resumed)' FROM walpilot.pilots
	 WHERE pilot = 'commit_delay'}),
	'the commit_delay pilot measures windows on the new primary');
my $pilots = $np->safe_psql('postgres',
	q{SELECT string_agg(pilot || ' | ' || state || ' | ' || reason, E'\n' ORDER BY pilot) FROM walpilot.pilots});
note("the new primary's pilots:\n$pilots");
is($np->safe_psql('postgres', q{
	SELECT count(*) FROM walpilot.pilots
	 WHERE state NOT IN ('idle', 'trial', 're-check', 'hold')
	    OR coalesce(reason, '') = '' OR reason ~ '^(standby|stopped)'}),
	'0', 'every pilot of the new primary tunes or gives its reason')
  or diag($pilots);
$load->kill_kill;

#
# (b) the demoted node says it is a standby
#
says_standby($old, 'the demoted node\'s pilots say it is a standby');
is($old->{server}->safe_psql('postgres',
		q{SELECT query FROM pg_stat_activity WHERE backend_type = 'walpilot worker'}),
	'walpilot worker (standby: observe only)',
	'the demoted node\'s worker observes only');

#
# (e) failover: the leader's node crashes under load (Patroni and
# PostgreSQL killed), the replica is promoted once the leader key expires,
# and the crashed node comes back as a replica, rewound by pg_rewind
# where its WAL went past the promotion.  walpilot keeps nothing on disk
# that pg_rewind or pg_basebackup copies (its only file is a pgsql_tmp
# one, which both skip; checked in (d)), so no trial or choice of one
# node reaches the other.
#
$load = start_insert_load($np, 8, 120);
ok($np->poll_query_until('postgres',
		"SELECT count(*) >= 2 FROM walpilot.timeline WHERE ts > '$promoted' AND commits > 0"),
	'a load runs on the leader before it crashes');
kill_daemon($new->{name});
$load->kill_kill;
($new, $old) = ($old, $new);
wait_until("$new->{name} is promoted after the leader crashed", 120, sub {
	role($new) eq 'leader';
}) or die 'no failover';
$np = $new->{server};
$promoted = $np->safe_psql('postgres', 'SELECT now()');
is($np->safe_psql('postgres',
		'SELECT count(*) FROM walpilot.settings WHERE effective_value <> configured_value'),
	'0', 'the promoted node runs only configured values');
start_patroni($old);
wait_until("the crashed $old->{name} rejoins and streams from $new->{name}", 180, sub {
	role($old) eq 'replica' && streams($new, $old);
}) or die 'the crashed node did not rejoin';
my $rewound = slurp_file("$logdir/${test}_$old->{name}_patroni.log") =~ /running pg_rewind from/;
note("$old->{name} " . ($rewound ? 'was rewound by pg_rewind' : 'needed no pg_rewind'));

$load = start_insert_load($np, 8, 60);
ok($np->poll_query_until('postgres', q{
	SELECT reason !~ '^(standby|starting|resumed)' FROM walpilot.pilots
	 WHERE pilot = 'commit_delay'}),
	'after the failover the promoted node\'s commit_delay pilot measures windows');
is($np->safe_psql('postgres', qq{
	SELECT count(*) FROM walpilot.decisions
	 WHERE decided_at < '$promoted' AND new_value <> '-'}),
	'0', 'the promoted node\'s decisions hold no choice from before its promotion');
$load->kill_kill;
says_standby($old, 'the rejoined node\'s pilots say it is a standby');

stop_daemons('node1', 'node2');
stop_daemons('etcd');

#
# (c) no walpilot ERROR, FATAL or PANIC in any server log, the shutdowns
# included
#
for my $n (sort { $a->{name} cmp $b->{name} } values %node)
{
	my @bad = grep { /\b(ERROR|FATAL|PANIC)\b/ && /walpilot/i }
	  split /\n/, slurp_file($n->{log});
	is(scalar(@bad), 0, "$n->{name}: no walpilot ERROR, FATAL or PANIC in the server log")
	  or diag(join("\n", @bad));
}

#
# (d) walpilot wrote nothing Patroni owns
#
for my $n (sort { $a->{name} cmp $b->{name} } values %node)
{
	my $after = owned_files($n);
	for my $f (sort keys %$after)
	{
		is($after->{$f}, $before{ $n->{name} }{$f}, "$n->{name}: $f unchanged");
	}
	my @state = -d "$n->{data}/pg_walpilot"
	  ? grep { !/^\.\.?$/ } do { opendir(my $d, "$n->{data}/pg_walpilot"); readdir $d }
	  : ();
	is("@state", '', "$n->{name}: no walpilot state in pg_walpilot/");
}

done_testing();

# a server Patroni left running (it was killed): stopped by its data
# directory
sub stop_postmaster
{
	my ($data) = @_;
	return unless -f "$data/postmaster.pid";
	system("$bindir/pg_ctl", '-D', $data, '-m', 'immediate', '-w', 'stop');
}
