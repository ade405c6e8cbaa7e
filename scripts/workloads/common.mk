# Shared settings for the workload makefiles in this folder.  Each is run as
#   make -f scripts/workloads/NAME.mk SRC=<unpacked source> OBJ=<object dir> BIN=<bin dir>
# and builds BIN/<name> (dynamic) and BIN/<name>-static from one set of
# objects.  Objects are not PIC: gcc for Alpha does not make PIE by default,
# so the same objects link either way.

ALPHA_CC ?= alpha-linux-gnu-gcc
CC       := $(ALPHA_CC)
# EXTRA_CFLAGS: for builds beside the workloads' own, such as the gcc PGO
# builds of scripts/workloads/pgo.sh (compiled and linked with them).
CFLAGS   := -O2 -g $(EXTRA_CFLAGS)
LDFLAGS  := -Wl,--emit-relocs

ifndef SRC
$(error SRC (the unpacked source directory) is not set)
endif
ifndef OBJ
$(error OBJ (the object directory) is not set)
endif
ifndef BIN
$(error BIN (the output directory) is not set)
endif

# The recipe files themselves: objects depend on them, so a changed flag
# rebuilds what it affects.
RECIPE   := $(MAKEFILE_LIST)

# object for a source path relative to SRC
obj_of = $(patsubst %.c,$(OBJ)/%.o,$(1))
