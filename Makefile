# walpilot — PGXS build
#
#   make && sudo make install          build and install into the server
#   test/run                           the whole test suite (see README)

MODULE_big = walpilot
OBJS = \
	src/walpilot.o \
	src/shmem.o \
	src/worker.o \
	src/sqlfuncs.o \
	src/pilot.o \
	src/pilot_commit_delay.o \
	src/gather.o \
	src/commit_path.o \
	src/settings.o \
	src/settings_checkpointer.o \
	src/settings_alter_system.o \
	src/pilot_flush.o \
	src/pilot_wal_size.o \
	src/probe.o \
	src/checkpoints.o \
	src/commit_window.o \
	src/commit_timing.o \
	src/commit_groups.o \
	src/histogram.o \
	src/trial.o \
	src/sampler.o \
	src/timeline.o \
	src/sqlfuncs_instruments.o \
	src/advice.o \
	src/evidence.o \
	src/compat_wal.o

EXTENSION = walpilot
DATA = $(wildcard sql/walpilot--*.sql)
PGFILEDESC = "walpilot - WAL commit path observer and tuner"

PG_CPPFLAGS = -I$(srcdir)/src

# pg_regress: its own temporary, preloaded instance.
REGRESS = setup status guc guc_units privileges instruments storage advice badinput cleanup
# REGRESS_PORT: test/run passes a free one, so runs can overlap.
REGRESS_PORT ?= 54329
REGRESS_OPTS = --temp-instance=./tmp_check \
	--temp-config=$(srcdir)/test/regress.conf --port=$(REGRESS_PORT)

EXTRA_CLEAN = tmp_check results log regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
