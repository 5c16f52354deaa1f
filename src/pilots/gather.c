/*-------------------------------------------------------------------------
 *
 * gather.c
 *		The commit_delay pilot's backend side: the group gather.
 *
 * At PRE_COMMIT of a durable commit a backend counts itself "arriving" (an
 * atomic counter and its own slot's arrival time); at COMMIT or ABORT it
 * leaves.  In gather mode the controller publishes commit_delay as a cap
 * and commit_siblings = 0, and this file publishes the group size G it
 * expects (the number of backends that committed recently).  Siblings 0,
 * because the first arrival after a group flush usually finds no other
 * transaction with an xid yet (the others are still running their next
 * statement), so with siblings 1 MinimumActiveBackends says no, that
 * leader flushes alone and the rest wait a whole flush for the next group
 * (measured: 3.0 commits per flush with 4 clients instead of 3.9).  The
 * flush leader sleeps in XLogFlush's pg_usleep(CommitDelay) holding
 * WALWriteLock; in PostgreSQL 15 that is a select(), which a signal cuts
 * short.  The backend whose arrival completes the group signals every
 * arrival of that group whose wait event is empty: the sleeping leader is
 * one of them (followers wait on LWLock:WALWrite), and so is any member
 * still between its arrival and its flush.  Each one so woken drops its
 * commit_delay to 0 for the rest of that commit, so a sleep that has not
 * begun yet does not begin (its group is complete).  So the leader sleeps
 * only as long as the group needs to arrive, never longer than the cap:
 * the count-bounded wait PostgreSQL lacks.  For a lone committer (G < 2)
 * the delay is dropped to 0 for that commit.  A session that sets
 * commit_delay or commit_siblings itself is no member of gathered groups:
 * it never arrives, so it is not counted in G either.  None of this takes
 * a lock, allocates or can throw.
 *
 * The wake-up is safe against hitting the wrong process by construction.
 * The sender reads a pid in its scan and signals it a moment later; by
 * then that backend may have exited (PostgreSQL 15's ProcKill leaves
 * PGPROC->pid as it was) and the pid been reused by any process.  So the
 * wake-up is SIGUSR1, whose handler in every PostgreSQL process (the
 * procsignal handler; the postmaster's and the startup process's too)
 * only looks at flags and sets a latch: a stray one costs a latch wake.
 * Before signalling, the sender writes a wake request into the target's
 * slot: a token of the arrival it saw there.  Regular backends wrap the
 * SIGUSR1 handler PostgreSQL installed (and nothing else: see
 * install_wake_handler) with one that acts on a request only in a
 * gathered commit whose arrival matches the token: it drops that commit's
 * delay and, when this backend is the sleeping leader (holding
 * WALWriteLock, in the commit_delay sleep), ends the sleep; any other
 * receiver counts a misdirected wake-up and returns at once.  It always
 * calls PostgreSQL's handler after.
 *
 * The worker (controller) switches gather mode on and off and has this
 * file recompute G every 100 ms from the slots' last-commit stamps.
 *
 * IDENTIFICATION
 *	  src/pilots/gather.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sched.h>
#include <signal.h>

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procsignal.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "pilots.h"

/*
 * The woken leader waits in the handler, at most WP_WAKE_SPIN_US, until
 * the arrival that completed the group has written its commit record (it
 * then waits on LWLock:WALWrite).  Without that wait, the woken leader
 * usually flushes before the last arrival has inserted its record, and
 * that one commit misses the group.
 */
#define WP_WAKE_SPIN_US			300

/* One per PGPROC, written only by its backend, padded against false sharing. */
typedef union WpGatherSlot
{
	struct
	{
		pg_atomic_uint32 wake_wrapped;	/* SIGUSR1 wrapped by walpilot */
		pg_atomic_uint32 wake_request;	/* arrival token; 0: none */
		pg_atomic_uint64 arrived_us;	/* 0 when not in a durable commit */
		pg_atomic_uint64 last_commit_at;	/* monotonic us (instr_time):
											 * end of its last durable
											 * commit */
		pg_atomic_uint64 wakeups_sent;	/* by this backend as the waker */
		pg_atomic_uint64 wakeups_misdirected;	/* received, not the leader */
	}			s;
	char		pad[PG_CACHE_LINE_SIZE];
} WpGatherSlot;

typedef struct WpGatherShared
{
	pg_atomic_uint32 in_commit;
	pg_atomic_uint32 gather_on;
	pg_atomic_uint32 gather_group;	/* G */
	pg_atomic_uint32 min_slot;	/* lowest slot index that committed */
	pg_atomic_uint32 max_slot;	/* highest slot index that committed + 1 */
	pg_atomic_uint32 waker_slot;	/* the arrival that completed a group */
	pg_atomic_uint64 group_closed_us;	/* its arrival time: older arrivals
										 * belong to earlier groups */
} WpGatherShared;

static WpGatherShared *gather = NULL;
static WpGatherSlot *gather_slots = NULL;	/* own cache-aligned region */

/*---- backend-local state ----*/
static bool commit_in_flight = false;	/* a durable commit, tune mode */
static volatile sig_atomic_t commit_counted = false;	/* ... counted as a
														 * gather arrival */
static struct sigaction pg_sigusr1;	/* the handler PostgreSQL installed */

/*
 * commit_delay as it was before this gathered commit, restored at its end;
 * -1 outside one.  Saved before commit_counted is set: from then on the
 * wake handler may set CommitDelay to 0.
 */
static int	saved_commit_delay = -1;

Size
wp_gather_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(WpGatherShared)),
					add_size(PG_CACHE_LINE_SIZE,
							 mul_size(sizeof(WpGatherSlot), wp_max_procs())));
}

void
wp_gather_shmem_init(void)
{
	bool		found;
	bool		slots_found;
	int			i;

	gather = ShmemInitStruct("walpilot gather", sizeof(WpGatherShared),
							 &found);
	gather_slots = ShmemInitStruct("walpilot gather slots",
								   mul_size(sizeof(WpGatherSlot),
											wp_max_procs()),
								   &slots_found);
	if (!found)
	{
		memset(gather, 0, sizeof(WpGatherShared));
		pg_atomic_init_u32(&gather->in_commit, 0);
		pg_atomic_init_u32(&gather->gather_on, 0);
		pg_atomic_init_u32(&gather->gather_group, 0);
		pg_atomic_init_u32(&gather->min_slot, (uint32) wp_max_procs());
		pg_atomic_init_u32(&gather->max_slot, 0);
		pg_atomic_init_u32(&gather->waker_slot, 0);
		pg_atomic_init_u64(&gather->group_closed_us, 0);
		for (i = 0; i < wp_max_procs(); i++)
		{
			pg_atomic_init_u32(&gather_slots[i].s.wake_wrapped, 0);
			pg_atomic_init_u32(&gather_slots[i].s.wake_request, 0);
			pg_atomic_init_u64(&gather_slots[i].s.arrived_us, 0);
			pg_atomic_init_u64(&gather_slots[i].s.last_commit_at, 0);
			pg_atomic_init_u64(&gather_slots[i].s.wakeups_sent, 0);
			pg_atomic_init_u64(&gather_slots[i].s.wakeups_misdirected, 0);
		}
	}
}

/* The request token for an arrival time: never 0 (0 means none). */
static inline uint32
wake_token(uint64 arrival_us)
{
	uint32		t = (uint32) arrival_us;

	return t != 0 ? t : 1;
}

/* One writer (this backend, here or in its handler): no locked add. */
static inline void
own_counter_add(pg_atomic_uint64 *c)
{
	pg_atomic_write_u64(c, pg_atomic_read_u64(c) + 1);
}

/*
 * is_request_for_me
 *		Was a request with this token meant for the gathered commit this
 *		backend is in now?  Called in the signal handler: commit_counted is
 *		a sig_atomic_t this backend sets around a gathered commit, and
 *		arrived_us is our own slot (only we write it).
 */
static bool
is_request_for_me(int slot, uint32 token)
{
	if (token == 0 || !commit_counted || MyProc == NULL)
		return false;
	return wake_token(pg_atomic_read_u64(&gather_slots[slot].s.arrived_us)) ==
		token;
}

/*
 * is_sleeping_leader
 *		Is this backend, in the commit a request was meant for, the flush
 *		leader in (or just before) its commit_delay sleep?  Called in the
 *		signal handler.
 *
 * Async-signal-safe: every test reads memory only.  In XLogFlush the
 * sleep runs holding WALWriteLock with no wait event reported (from taking
 * the lock on, so a leader just before its sleep answers yes too: the
 * dropped delay then skips the sleep), and nowhere else in a commit
 * does a backend hold WALWriteLock without a wait event for long.
 * LWLockHeldByMe() scans held_lwlocks[0 .. num_held_lwlocks), a
 * process-local array that only this process writes and that never moves:
 * reading it from a handler that interrupted LWLockAcquire/Release may
 * give a stale answer for a lock being taken or let go at that instant,
 * never a fault (the index is bounded by the count read once per step and
 * the array is static).  A stale "held" costs at most WP_WAKE_SPIN_US of
 * waiting in the one backend that is taking or leaving WALWriteLock,
 * i.e. the leader itself; a stale "not held" just counts a misdirected
 * wake-up.
 */
static bool
is_sleeping_leader(void)
{
	if (!wp_wait_may_be_leader_at_delay(WP_READ_ONCE_U32(MyProc->wait_event_info)))
		return false;
	return LWLockHeldByMe(WALWriteLock);
}

/*
 * wait_for_waker
 *		In the leader's handler: wait, briefly, until the arrival that
 *		completed the group is queued behind us (it shows a wait event, or
 *		has finished).  Shared-memory reads, clock_gettime, sched_yield.
 */
static void
wait_for_waker(void)
{
	uint32		waker_slot = pg_atomic_read_u32(&gather->waker_slot);
	PGPROC	   *waker;
	instr_time	start,
				now;

	if (waker_slot >= (uint32) wp_max_procs())
		return;
	waker = &ProcGlobal->allProcs[waker_slot];
	INSTR_TIME_SET_CURRENT(start);
	for (;;)
	{
		if (WP_READ_ONCE_U32(waker->wait_event_info) != 0 ||
			pg_atomic_read_u64(&gather_slots[waker_slot].s.arrived_us) == 0)
			break;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (INSTR_TIME_GET_MICROSEC(now) > WP_WAKE_SPIN_US)
			break;
		sched_yield();
	}
}

/*
 * wake_signal_handler
 *		SIGUSR1 in a regular backend that wrapped PostgreSQL's handler.
 *
 * A pending wake request is taken (and cleared) first.  A request meant
 * for the gathered commit this backend is in says that commit's group is
 * complete: the commit's commit_delay drops to 0 (wp_gather_end restores
 * it), so a sleep that has not started does not start -- XLogFlush loads
 * CommitDelay for pg_usleep only after its MinimumActiveBackends() call,
 * and a signal that lands between taking WALWriteLock and the sleep would
 * otherwise be lost and the sleep run in full.  The sleeping leader then
 * waits for the waker and returns, and the return ends a sleep that is
 * running (select() or nanosleep() fails with EINTR).  Anyone else counts
 * a misdirected wake-up and returns at once.  Either way commit groups
 * learns whether a commit_delay sleep ended here, and why.  PostgreSQL's
 * handler runs after, in every case, so procsignals are never lost.
 */
static void
wake_signal_handler(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;

	if (MyProc != NULL && gather_slots != NULL)
	{
		int			slot = wp_my_proc_number();
		uint32		token;
		bool		mine;

		token = pg_atomic_exchange_u32(&gather_slots[slot].s.wake_request, 0);
		mine = is_request_for_me(slot, token);
		if (mine)
			CommitDelay = 0;	/* saved before commit_counted was set */
		if (mine && is_sleeping_leader())
		{
			wait_for_waker();
			wp_commit_groups_note_wakeup(true);
		}
		else
		{
			if (token != 0)
				own_counter_add(&gather_slots[slot].s.wakeups_misdirected);
			/* a member not yet at its flush: the sleep will not begin */
			wp_commit_groups_note_wakeup(mine);
		}
	}

	if (pg_sigusr1.sa_flags & SA_SIGINFO)
		pg_sigusr1.sa_sigaction(signo, info, context);
	else
		pg_sigusr1.sa_handler(signo);
	errno = save_errno;
}

/*
 * sigusr1_is_postgres
 *		Is this SIGUSR1 disposition the one PostgreSQL set in a regular
 *		backend?  Through PostgreSQL 16 pqsignal installs the handler
 *		itself; from 17 on every handler pqsignal sets runs behind one
 *		wrapper, so the test is that SIGUSR1 carries the same wrapper as
 *		SIGINT (the cancel handler).
 */
static bool
sigusr1_is_postgres(const struct sigaction *cur)
{
#if WP_PQSIGNAL_WRAPS_HANDLERS
	struct sigaction intr;

	if (sigaction(SIGINT, NULL, &intr) != 0)
		return false;
	if ((cur->sa_flags & SA_SIGINFO) != (intr.sa_flags & SA_SIGINFO))
		return false;
	if (cur->sa_flags & SA_SIGINFO)
		return cur->sa_sigaction == intr.sa_sigaction;
	return cur->sa_handler == intr.sa_handler &&
		cur->sa_handler != SIG_DFL && cur->sa_handler != SIG_IGN;
#else
	return !(cur->sa_flags & SA_SIGINFO) &&
		cur->sa_handler == procsignal_sigusr1_handler;
#endif
}

/*
 * install_wake_handler
 *		Once per process: in a regular backend whose SIGUSR1 handler is
 *		still PostgreSQL's, wrap it.  Anything else (another extension's
 *		handler, a background worker) is left alone: a wake-up there is
 *		PostgreSQL's plain SIGUSR1, which still ends the sleep.
 */
static void
install_wake_handler(int slot)
{
	static bool tried = false;
	struct sigaction cur;
	struct sigaction act;

	if (tried)
		return;
	tried = true;
	/* a new owner of the slot: nothing a previous one left applies */
	pg_atomic_write_u32(&gather_slots[slot].s.wake_request, 0);
	pg_atomic_write_u32(&gather_slots[slot].s.wake_wrapped, 0);
	if (MyBackendType != B_BACKEND)
		return;
	if (sigaction(SIGUSR1, NULL, &cur) != 0 || !sigusr1_is_postgres(&cur))
		return;

	pg_sigusr1 = cur;
	memset(&act, 0, sizeof(act));
	act.sa_sigaction = wake_signal_handler;
	act.sa_mask = cur.sa_mask;
	act.sa_flags = cur.sa_flags | SA_SIGINFO;
	if (sigaction(SIGUSR1, &act, NULL) != 0)
		return;
	pg_atomic_write_u32(&gather_slots[slot].s.wake_wrapped, 1);
}

/*
 * wp_gather_wake_backend
 *		Deliver a wake-up to the backend in PGPROC slot "slot", believed to
 *		run as "pid", whose arrival the sender saw as arrival_us: the
 *		request first, then the signal.  Whatever process "pid" really is
 *		by now, SIGUSR1 only costs it a latch wake; a backend in that slot
 *		that is not the sleeping leader counts it and returns.
 */
void
wp_gather_wake_backend(int slot, int pid, uint64 arrival_us)
{
	if (gather_slots == NULL || slot < 0 || slot >= wp_max_procs() ||
		pid <= 0)
		return;
	pg_atomic_write_u32(&gather_slots[slot].s.wake_request,
						wake_token(arrival_us));
	if (MyProc != NULL)
		own_counter_add(&gather_slots[wp_my_proc_number()].s.wakeups_sent);
	(void) kill(pid, SIGUSR1);
}

/* Could slot i's backend, arrived at a, be the sleeping leader now? */
static inline bool
may_be_sleeping(int i, uint64 a, uint64 closed, uint64 my_arrival)
{
	/*
	 * No wait event up to 18, Timeout:CommitDelay from 19 (and none just
	 * before the sleep): followers wait on LWLock:WALWrite.
	 */
	return a > closed && a <= my_arrival &&
		wp_wait_may_be_leader_at_delay(WP_READ_ONCE_U32(ProcGlobal->allProcs[i].wait_event_info));
}

/*
 * wake_leader
 *		The group may be complete: if G backends have arrived since the last
 *		group closed, cut the sleeping leader's commit_delay short.
 *
 * The in_commit count alone is not enough: a member of the previous group
 * that has not yet been scheduled since its flush still counts, and waking
 * on it closed the group one arrival early -- that arrival then waited a
 * whole extra flush (0.5 % of commits at 8 clients).  So this scan counts
 * only arrivals after the previous group's closing arrival, and the
 * compare-and-swap of that time lets exactly one arrival close a group.
 *
 * Which of them sleeps cannot be told from outside: a member descheduled,
 * or still running (ON COMMIT actions, say), between its arrival and its
 * flush shows no wait event either, and may have arrived before the
 * leader.  Signalling only the earliest such arrival woke that member and
 * left the real leader asleep for the whole cap (later scans skip it: its
 * arrival is no longer fresh).  So every arrival of the closed group that
 * shows no wait event is signalled; a member that is not the sleeping
 * leader counts a misdirected wake-up and drops its delay (its group is
 * complete), and so does the closing arrival itself.  The extra cost is
 * one kill() per member caught between its arrival and its place in the
 * WALWriteLock queue, usually none.
 */
static void
wake_leader(int my_slot, uint64 my_arrival, uint32 group)
{
	int			lo = (int) pg_atomic_read_u32(&gather->min_slot);
	int			hi = (int) pg_atomic_read_u32(&gather->max_slot);
	uint64		closed = pg_atomic_read_u64(&gather->group_closed_us);
	uint32		fresh = 1;		/* this arrival */
	bool		sleeper = false;
	int			i;

	if (my_arrival <= closed)
		return;
	for (i = lo; i < hi; i++)
	{
		uint64		a;

		if (i == my_slot)
			continue;
		a = pg_atomic_read_u64(&gather_slots[i].s.arrived_us);
		if (a == 0 || a <= closed)
			continue;
		fresh++;
		if (!sleeper && may_be_sleeping(i, a, closed, my_arrival))
			sleeper = true;
	}
	if (fresh < group || !sleeper)
		return;
	if (!pg_atomic_compare_exchange_u64(&gather->group_closed_us, &closed,
										my_arrival))
		return;					/* another arrival closed it */

	pg_atomic_write_u32(&gather->waker_slot, (uint32) my_slot);
	/*
	 * The closing arrival is a member too: should it miss the leader's
	 * flush and lead the next one, its arrival is not fresh there and
	 * nothing would wake it.
	 */
	CommitDelay = 0;
	/* closed still holds the previous group's closing arrival */
	for (i = lo; i < hi; i++)
	{
		uint64		a;
		int			pid;

		if (i == my_slot)
			continue;
		a = pg_atomic_read_u64(&gather_slots[i].s.arrived_us);
		if (a == 0 || !may_be_sleeping(i, a, closed, my_arrival))
			continue;
		pid = WP_READ_ONCE_I32(ProcGlobal->allProcs[i].pid);
		if (pid > 0)
			wp_gather_wake_backend(i, pid, a);
	}
}

/*
 * wp_gather_pre_commit
 *		Commit-path observer at PRE_COMMIT of a top-level transaction.  In
 *		tune mode notes that this backend commits durably (the group size)
 *		and, in gather mode, counts the arrival.  No lock, no allocation,
 *		no error.
 */
void
wp_gather_pre_commit(const WpCommitContext *ctx)
{
	int			slot;
	instr_time	arrival;
	uint64		now;
	uint32		n;
	uint32		group;

	if (gather == NULL || !ctx->durable || MyProc == NULL ||
		wp_mode != WP_MODE_TUNE)
		return;

	/*
	 * A session that sets the pair itself never arrives in a gathered
	 * group: it must not count in G either, or no group ever reaches its
	 * count while it commits and every leader sleeps the whole cap.
	 */
	if (wp_settings_session_owns_pair())
		return;

	/* tune mode: the worker needs to know who commits (the group size) */
	commit_in_flight = true;
	slot = wp_my_proc_number();
	/* unlocked widening; a lost race is repaired at the next commit */
	if ((uint32) slot >= pg_atomic_read_u32(&gather->max_slot))
		pg_atomic_write_u32(&gather->max_slot, (uint32) slot + 1);
	if ((uint32) slot < pg_atomic_read_u32(&gather->min_slot))
		pg_atomic_write_u32(&gather->min_slot, (uint32) slot);
	install_wake_handler(slot);
	if (!pg_atomic_read_u32(&gather->gather_on))
		return;

	/* gather mode: count this arrival (commit timing's start stamp) */
	now = ctx->start_us;
	if (now == 0)
	{
		INSTR_TIME_SET_CURRENT(arrival);
		now = INSTR_TIME_GET_MICROSEC(arrival);
	}
	pg_atomic_write_u64(&gather_slots[slot].s.arrived_us, now);
	saved_commit_delay = CommitDelay;
	/* the handler acts (and may zero CommitDelay) only from here on */
	pg_compiler_barrier();
	commit_counted = true;
	n = pg_atomic_add_fetch_u32(&gather->in_commit, 1);

	group = pg_atomic_read_u32(&gather->gather_group);
	if (group < 2)
		CommitDelay = 0;		/* nobody to wait for */
	else if (n >= group)
		wake_leader(slot, now, group);
}

/*
 * wp_gather_end
 *		Commit-path observer at COMMIT and ABORT of the same transactions:
 *		restores this session's commit_delay and counts the arrival out.
 *		ctx->end_us is commit timing's monotonic stamp of a durable
 *		commit's end, 0 when it took none (an abort): reused rather than
 *		reading the clock again.  Same rules.
 */
void
wp_gather_end(const WpCommitContext *ctx)
{
	int			slot;
	uint64		end = ctx->end_us;
	bool		counted = commit_counted;

	/* out of the gathered commit first: the handler no longer touches it */
	commit_counted = false;
	pg_compiler_barrier();
	if (saved_commit_delay >= 0)
	{
		CommitDelay = saved_commit_delay;
		saved_commit_delay = -1;
	}
	if (!commit_in_flight || gather == NULL)
		return;
	commit_in_flight = false;

	slot = wp_my_proc_number();
	if (end == 0)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		end = INSTR_TIME_GET_MICROSEC(now);
	}
	pg_atomic_write_u64(&gather_slots[slot].s.last_commit_at, end);
	if (!counted)
		return;
	pg_atomic_write_u64(&gather_slots[slot].s.arrived_us, 0);
	pg_atomic_fetch_sub_u32(&gather->in_commit, 1);
}

/*---- worker side ----*/

/*
 * wp_gather_set_enabled
 *		Controller: switch gather mode on or off for every backend.
 */
void
wp_gather_set_enabled(bool on)
{
	if (gather != NULL)
		pg_atomic_write_u32(&gather->gather_on, on ? 1 : 0);
}

/*
 * wp_gather_group
 *		G as last published: backends with a recent durable commit.
 */
uint32
wp_gather_group(void)
{
	return gather ? pg_atomic_read_u32(&gather->gather_group) : 0;
}

/*
 * wp_gather_update_group
 *		Worker, every 100 ms: publish G, the number of backends that
 *		finished a durable commit in the last few commit latencies
 *		(commit_p50_us: the last second's median); and retire a stuck
 *		in_commit count.
 */
void
wp_gather_update_group(double commit_p50_us)
{
	instr_time	clock;
	uint64		now;
	int64		horizon = (int64) Max(50000.0, 4.0 * commit_p50_us);
	int			lo;
	int			n;
	uint32		group = 0;
	uint32		in_commit_slots = 0;
	int			i;

	if (gather == NULL)
		return;
	INSTR_TIME_SET_CURRENT(clock);
	now = INSTR_TIME_GET_MICROSEC(clock);
	lo = (int) pg_atomic_read_u32(&gather->min_slot);
	n = (int) pg_atomic_read_u32(&gather->max_slot);
	for (i = lo; i < n; i++)
	{
		uint64		last = pg_atomic_read_u64(&gather_slots[i].s.last_commit_at);

		/* signed: a stamp taken just after "now" counts as recent */
		if (last != 0 && (int64) (now - last) < horizon)
			group++;
		if (pg_atomic_read_u64(&gather_slots[i].s.arrived_us) != 0)
			in_commit_slots++;
	}
	pg_atomic_write_u32(&gather->gather_group, group);

	/* a backend that died mid-commit must not leave the counter high */
	if (pg_atomic_read_u32(&gather->in_commit) > in_commit_slots + (uint32) n)
		pg_atomic_write_u32(&gather->in_commit, in_commit_slots);
}

/*
 * wp_gather_wakeup_counts
 *		Wake-ups sent by gathering backends, and wake-ups a backend received
 *		while it was not the sleeping leader (since the server started).
 *		Any process; no lock.
 */
void
wp_gather_wakeup_counts(uint64 *sent, uint64 *misdirected)
{
	int			i;

	*sent = 0;
	*misdirected = 0;
	if (gather_slots == NULL)
		return;
	for (i = 0; i < wp_max_procs(); i++)
	{
		*sent += pg_atomic_read_u64(&gather_slots[i].s.wakeups_sent);
		*misdirected +=
			pg_atomic_read_u64(&gather_slots[i].s.wakeups_misdirected);
	}
}
