# walpilot — PGXS build
#
#   make && sudo make install          build and install into the server
#   test/run                           the whole test suite (see README)

MODULE_big = walpilot
# src/ has one folder per layer, bottom to top (docs/architecture.md); every
# .c file in them is part of the module.
LAYERS = core instruments settings pilots advice views hub
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard $(addprefix src/,$(addsuffix /*.c,$(LAYERS))))))

EXTENSION = walpilot
DATA = $(wildcard sql/walpilot--*.sql)
PGFILEDESC = "walpilot - WAL commit path observer and tuner"

PG_CPPFLAGS = $(addprefix -I$(srcdir)/src/,$(LAYERS))
# Calls and data references between walpilot's own files bind inside the
# library (no PLT or GOT hop in the commit path); what the server looks up
# by name stays exported.  From 16 on PGXS's -fvisibility=hidden does the
# same for everything not exported.
SHLIB_LINK += -Wl,-Bsymbolic

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
