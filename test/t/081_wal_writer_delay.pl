# wal_writer_delay advice under an asynchronous-commit load: a 10 ms
# wal_writer_delay on an emulated slow disk (8 ms per flush) keeps the WAL
# writer syncing most of the time -- advice; the same delay on an emulated
# fast disk (0.2 ms) costs little -- none; the default 200 ms -- none.
# Shares the machine: every disk here is emulated with real_sync=0, so a
# busy machine only makes the emulated flushes a little late (passed with
# two busy loops on both cores beside it).
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use WalpilotTest;

my $conf = q{
walpilot.mode = 'observe'
wal_writer_delay = 10ms
track_wal_io_timing = on
max_connections = 40
};
my $slow = WalpilotTest::emulated_node('wwdslow', 'hdd,real_sync=0', $conf);
my $fast = WalpilotTest::emulated_node('wwdfast', 'ssd,real_sync=0', $conf);
# A 1 ms delay on the slow disk, where one sync lasts several delays --
# advice too.  The slow disk's advice is read after the other nodes' loads,
# while its own server sits idle: the rates are per second of load, so the
# idle seconds after it do not dilute them (from PostgreSQL 17 the WAL
# writer syncs about once per delay plus one sync, not back to back, and
# the dilution used to hide the advice there).
(my $conf_1ms = $conf) =~ s/wal_writer_delay = 10ms/wal_writer_delay = 1ms/;
my $short = WalpilotTest::emulated_node('wwdshort', 'hdd,real_sync=0', $conf_1ms);

sub async_load
{
	my ($node, $seconds) = @_;
	local $ENV{PGOPTIONS} = '-c synchronous_commit=off';
	my $h = WalpilotTest::start_insert_load($node, 4, $seconds);
	$h->finish;
}

my $row = q{SELECT current_value || '|' || recommended_value || '|' || requires_restart
			  FROM walpilot.recommendations WHERE setting = 'wal_writer_delay'};
my $ev = q{SELECT evidence ->> '%s' FROM walpilot.recommendations
			WHERE setting = 'wal_writer_delay'};

for my $node ($slow, $fast, $short)
{
	$node->safe_psql('postgres', 'SELECT walpilot.reset()');
	is($node->safe_psql('postgres', $row), '', $node->name . ': idle: no advice');
	async_load($node, 15);
}

my $figures = q{SELECT format('%s: %s syncs/s not led by commits, %s us each, %s of the time, over %s s',
			  current_value, evidence ->> 'syncs_not_led_by_commits_per_s', evidence ->> 'sync_us',
			  evidence ->> 'share_of_time_syncing', evidence ->> 'seconds')
			  FROM walpilot.recommendations WHERE setting = 'wal_writer_delay'};
diag('slow disk: ' . $_->safe_psql('postgres', $figures)) for ($slow, $short);

like($slow->safe_psql('postgres', $row), qr/^10ms\|(20|40|80|\d+)ms\|false$/,
	'slow disk, 10 ms wal_writer_delay, asynchronous commits: wal_writer_delay advice');
my ($rec) = $slow->safe_psql('postgres', $row) =~ /^10ms\|(\d+)ms/;
cmp_ok($rec // 0, '>=', 20, 'slow disk: at least double the current');
cmp_ok($rec // 999, '<=', 200, 'slow disk: at most the default 200 ms');
cmp_ok($slow->safe_psql('postgres', sprintf($ev, 'share_of_time_syncing')), '>=', 0.25,
	'slow disk: the evidence is the share of time the WAL writer syncs');
cmp_ok($slow->safe_psql('postgres', sprintf($ev, 'sync_us')), '>=', 4000,
	'slow disk: ... from the measured sync time (emulated 8 ms)');
like($slow->safe_psql('postgres', sprintf($ev, 'sync_us_source')), qr/track_wal_io_timing/,
	'slow disk: ... which pg_stat_wal timed');
cmp_ok($slow->safe_psql('postgres', sprintf($ev, 'async_commits_per_s')), '>=', 20,
	'slow disk: ... under asynchronous commits');
cmp_ok($slow->safe_psql('postgres', sprintf($ev, 'seconds')) || 999, '<=', 25,
	'slow disk: ... over the seconds of its 15-s load, not the idle ones after it');
is($slow->safe_psql('postgres',
		q{SELECT count(*) FROM walpilot.recommendations WHERE setting = 'wal_writer_flush_after'}),
	'0', 'slow disk: one sync per cycle: no wal_writer_flush_after advice beside it');

is($fast->safe_psql('postgres', $row), '',
	'fast disk, the same 10 ms delay: the syncs cost little: no advice');

# one sync (8 ms) lasts eight delays: far fewer syncs than one per delay,
# but the WAL writer is syncing nearly all the time
like($short->safe_psql('postgres', $row), qr/^1ms\|\d+ms\|false$/,
	'slow disk, 1 ms wal_writer_delay: wal_writer_delay advice');
my ($rec_short) = $short->safe_psql('postgres', $row) =~ /^1ms\|(\d+)ms/;
cmp_ok($rec_short // 0, '>=', 20, '1 ms delay: the delay at which the syncs take a tenth (about 90 ms)');
cmp_ok($short->safe_psql('postgres', sprintf($ev, 'share_of_time_syncing')), '>=', 0.5,
	'1 ms delay: the WAL writer syncs most of the time');

$slow->safe_psql('postgres',
	"ALTER SYSTEM SET wal_writer_delay = '200ms'; SELECT pg_reload_conf();");
ok($slow->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM walpilot.recommendations WHERE setting = 'wal_writer_delay'}),
	'slow disk: gone once wal_writer_delay is the default 200 ms');

$_->stop for ($slow, $fast, $short);
done_testing();
