# The gather's wake-up is harmless wherever it lands.  The waker reads a
# pid in its scan and signals it later; by then the pid may belong to any
# process.  Here the real delivery step (wp_gather_wake_backend) is aimed
# on purpose at processes that are not the sleeping flush leader: the
# checkpointer (as if its pid had been reused from a backend's slot), the
# checkpointer with a request in its own slot, and a regular backend that
# holds a lock.  None of them may act on it: the checkpointer keeps
# running (no shutdown checkpoint, no crash restart), the backend finishes
# its transaction, and each misdirected wake-up a backend receives is
# counted.
# walpilot-test: alone (it times the gather wake-up)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::Bin;
use WalpilotTest;

my $node = new_node('wakeup', conf => q{
shared_preload_libraries = 'walpilot'
walpilot.mode = 'tune'
log_checkpoints = on
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION walpilot;
CREATE TABLE t (v int);
});

# A small C module that calls walpilot's delivery step and its counter
# getter (resolved at run time, so the module loads into any build).
my $probe = build_probe_module($node, 'wake_probe', <<'C');
#include "postgres.h"
#include <dlfcn.h>
#include <signal.h>
#include "fmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
PG_MODULE_MAGIC;

typedef void (*wake_fn) (int, int, uint64);
typedef void (*counts_fn) (uint64 *, uint64 *);

PG_FUNCTION_INFO_V1(wake_probe);
Datum
wake_probe(PG_FUNCTION_ARGS)
{
	int			target = PG_GETARG_INT32(0);
	int			slot_pid = PG_GETARG_INT32(1);
	PGPROC	   *p = BackendPidGetProc(slot_pid);
	wake_fn		f = (wake_fn) dlsym(RTLD_DEFAULT, "wp_gather_wake_backend");

	if (p == NULL)
		p = AuxiliaryPidGetProc(slot_pid);
	if (p == NULL)
		elog(ERROR, "no PGPROC for pid %d", slot_pid);
	if (f != NULL)
	{
		f((int) (p - ProcGlobal->allProcs), target, 0);
		PG_RETURN_TEXT_P(cstring_to_text("delivered"));
	}
	/* a build without the delivery step: what its waker sent */
	kill(target, SIGUSR2);
	PG_RETURN_TEXT_P(cstring_to_text("SIGUSR2"));
}

PG_FUNCTION_INFO_V1(wake_misdirected);
Datum
wake_misdirected(PG_FUNCTION_ARGS)
{
	counts_fn	f = (counts_fn) dlsym(RTLD_DEFAULT, "wp_gather_wakeup_counts");
	uint64		sent,
				mis;

	if (f == NULL)
		PG_RETURN_NULL();
	f(&sent, &mis);
	PG_RETURN_INT64((int64) mis);
}
C
$node->safe_psql('postgres', qq{
CREATE FUNCTION wake_probe(int, int) RETURNS text
  AS '$probe', 'wake_probe' LANGUAGE C STRICT;
CREATE FUNCTION wake_misdirected() RETURNS bigint
  AS '$probe', 'wake_misdirected' LANGUAGE C;
});

my $ckpt_pid_sql = q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'};
my $ckpt = $node->safe_psql('postgres', $ckpt_pid_sql);
ok($ckpt > 0, 'the checkpointer runs');

#
# The checkpointer, twice: as a stale pid read from this backend's slot,
# and with a request in its own slot.
#
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', qq{SELECT wake_probe($ckpt, pg_backend_pid())});
$node->safe_psql('postgres', qq{SELECT wake_probe($ckpt, $ckpt)});
# A checkpoint request after the wake-ups: the checkpointer handles the
# signals it got before it serves the request, so once the CHECKPOINT
# returns it has acted on them (a shutdown request, say) if it ever will.
is($node->psql('postgres', 'CHECKPOINT'), 0,
	'the checkpointer serves a checkpoint after the wake-ups');
my $alive = $node->psql('postgres', 'SELECT 1');
is($alive, 0, 'the server still accepts queries');
is($node->safe_psql('postgres', $ckpt_pid_sql), $ckpt,
	'the checkpointer is the same process');
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/checkpoint starting: shutdown|shutting down|terminating any other active server processes/,
	'no shutdown checkpoint and no crash restart');

#
# A regular backend that holds a lock (not the flush leader): it counts
# the misdirected wake-up, returns at once and finishes its transaction.
#
my $before = $node->safe_psql('postgres', 'SELECT wake_misdirected()');
my ($out, $err);
my $h = IPC::Run::start(
	[ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-h', $node->host,
	  '-p', $node->port, '-d', 'postgres', '-c',
	  'INSERT INTO t VALUES (1)', '-c',
	  'BEGIN; LOCK TABLE t; INSERT INTO t VALUES (2); SELECT pg_sleep(3); COMMIT;' ],
	'>', \$out, '2>', \$err);
my $holder;
wait_until('a backend holds a lock and sleeps', 15, sub {
	$holder = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3)%' AND wait_event = 'PgSleep'});
});
$node->safe_psql('postgres', qq{SELECT wake_probe($holder, $holder)});
$h->finish;
is($h->result(0), 0, 'the lock holder finishes its transaction');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '2',
	'both of its inserts are committed');
my $after = $node->safe_psql('postgres', 'SELECT wake_misdirected()');
ok($after ne '' && $before ne '' && $after == $before + 1,
	"the misdirected wake-up is counted ($before -> $after)");

$node->stop;
done_testing();
