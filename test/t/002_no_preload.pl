# Without shared_preload_libraries, CREATE EXTENSION works but every view
# and function fails with a clear error naming the missing preload.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('nopreload');
$node->start;

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE EXTENSION walpilot');
is($ret, 0, 'CREATE EXTENSION works without the preload');

foreach my $q ('SELECT * FROM walpilot.status', 'SELECT walpilot.reset()')
{
	($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\n$q");
	isnt($ret, 0, "'$q' fails without the preload");
	like($stderr, qr/55000: walpilot must be loaded via "shared_preload_libraries"/,
		"'$q' names shared_preload_libraries with SQLSTATE 55000");
	like($stderr, qr/HINT:  Add walpilot to "shared_preload_libraries" and restart the server\./,
		"'$q' hints at the fix");
}

is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walpilot worker'"),
	'0', 'no worker without the preload');

$node->stop;
done_testing();
