# cpo: one non-recursive Makefile.
#
# Each room (alpha/, image/, ...) compiles its *.c into one static library,
# build/lib/libcpo_<room>.a.  Each tool is a folder tools/<name>/ whose *.c
# link against the rooms into build/bin/<name>.  The same sources are built a
# second time under AddressSanitizer and UndefinedBehaviorSanitizer into
# build/asan/ for the unit tests.

CC      ?= gcc
PREFIX  ?= /usr/local
BUILD   ?= build

# Rooms in link order: a room may use only the rooms after it (the machine
# calls the collector's driver; the collector's daemon writes the profdb).
ROOMS   := service report rewriter optimizer estimator paths cfg machine collector profdb image alpha common

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CSTD    := -std=gnu11
CPPFLAGS_ALL := -I. -D_GNU_SOURCE
OPT     ?= -O2 -g
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) $(CPPFLAGS_ALL) $(CFLAGS)
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# libbfd-multiarch reads Alpha objects (Debian's plain libbfd knows only the host).
LIBS    := -lelf -lbfd-multiarch -lzstd -lz -lpthread -lm

ALPHA_CC ?= alpha-linux-gnu-gcc

room_srcs = $(wildcard $(1)/*.c)
ALL_ROOM_SRCS := $(foreach r,$(ROOMS),$(call room_srcs,$(r)))
ROOM_LIBS     := $(foreach r,$(ROOMS),$(if $(call room_srcs,$(r)),$(BUILD)/lib/libcpo_$(r).a))
ASAN_LIBS     := $(foreach r,$(ROOMS),$(if $(call room_srcs,$(r)),$(BUILD)/asan/lib/libcpo_$(r).a))

TOOLS   := $(notdir $(patsubst %/,%,$(wildcard tools/*/)))
TOOL_BINS := $(TOOLS:%=$(BUILD)/bin/%)

UNIT_SRCS := $(wildcard tests/unit/*.c)
FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZERS   := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)

.PHONY: all install test check unit unit-asan fuzz bench workloads programs demo week clean
all: $(TOOL_BINS)

# ---- objects and room libraries -------------------------------------------
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(SANFLAGS) $(WARN) $(CPPFLAGS_ALL) $(CFLAGS) -MMD -MP -c $< -o $@

define room_rules
$(BUILD)/lib/libcpo_$(1).a: $(patsubst %.c,$(BUILD)/obj/%.o,$(call room_srcs,$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(BUILD)/asan/lib/libcpo_$(1).a: $(patsubst %.c,$(BUILD)/asan/obj/%.o,$(call room_srcs,$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach r,$(ROOMS),$(if $(call room_srcs,$(r)),$(eval $(call room_rules,$(r)))))

# The instrumented image's runtime, built for Alpha (scripts/build-runtime.sh)
# and carried by rewriter/rtblob.c.  Without the cross compiler the tools
# build without it, and `optimize-image --instrument` says so.
ifneq ($(shell command -v $(ALPHA_CC) 2>/dev/null),)
RT_BLOB := $(BUILD)/gen/rt.bin
$(RT_BLOB): rewriter/runtime/rt.S rewriter/runtime/rt.c rewriter/runtime/rt.h scripts/build-runtime.sh
	@mkdir -p $(dir $@)
	bash scripts/build-runtime.sh $(ALPHA_CC) $@
$(BUILD)/obj/rewriter/rtblob.o $(BUILD)/asan/obj/rewriter/rtblob.o: $(RT_BLOB)
$(BUILD)/obj/rewriter/rtblob.o $(BUILD)/asan/obj/rewriter/rtblob.o: CFLAGS += -DRT_BLOB='"$(RT_BLOB)"'
endif

# ---- tools -------------------------------------------------------------
define tool_rules
$(BUILD)/bin/$(1): $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tools/$(1)/*.c)) $(ROOM_LIBS)
	@mkdir -p $$(dir $$@)
	$(CC) $(OPT) -o $$@ $$(filter %.o,$$^) $(ROOM_LIBS) $(LIBS)
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rules,$(t))))

SYSTEMD_DIR ?= /etc/systemd/system
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SYSTEMD_DIR)
	install -m 755 $(TOOL_BINS) $(DESTDIR)$(PREFIX)/bin/
	for u in cpod cpo-serve; do \
	  sed 's|@PREFIX@|$(PREFIX)|g' scripts/systemd/$$u.service >$(DESTDIR)$(SYSTEMD_DIR)/$$u.service; \
	done

# ---- unit tests (Criterion), plain and under ASan+UBSan -----------------
$(BUILD)/tests/unit: $(patsubst %.c,$(BUILD)/obj/%.o,$(UNIT_SRCS)) $(ROOM_LIBS)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(filter %.o,$^) $(ROOM_LIBS) $(LIBS) -lcriterion

$(BUILD)/asan/tests/unit: $(patsubst %.c,$(BUILD)/asan/obj/%.o,$(UNIT_SRCS)) $(ASAN_LIBS)
	@mkdir -p $(dir $@)
	$(CC) -fsanitize=address,undefined -o $@ $(filter %.o,$^) $(ASAN_LIBS) $(LIBS) -lcriterion

unit: $(BUILD)/tests/unit
	$(BUILD)/tests/unit
unit-asan: $(BUILD)/asan/tests/unit
	ASAN_OPTIONS=detect_leaks=0 $(BUILD)/asan/tests/unit

# ---- fuzzers (libFuzzer, clang) -----------------------------------------
# A fuzzer tests/fuzz/NAME.c is compiled with the sources of the rooms it
# needs: fuzz_rooms_NAME (default: alpha image; common always), so one room's clang
# warnings never break another room's fuzzer.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
fuzz_rooms_default := alpha image
fuzz_rooms_fuzz_profile := profdb
fuzz_rooms_fuzz_exact := profdb
fuzz_rooms_fuzz_truth := profdb
fuzz_rooms_fuzz_pm_truth := profdb
fuzz_rooms_fuzz_values := profdb
fuzz_rooms_fuzz_profileme := alpha image profdb collector
fuzz_rooms_fuzz_stacks := profdb
fuzz_rooms_fuzz_stackring := alpha image profdb collector
fuzz_rooms_fuzz_plan := alpha image cfg optimizer
fuzz_rooms_fuzz_cpod := alpha image profdb collector
fuzz_rooms_fuzz_ehframe := alpha image cfg optimizer rewriter
fuzz_rooms_fuzz_lsda := alpha image cfg optimizer rewriter
fuzz_rooms_fuzz_addrmap := alpha image cfg optimizer rewriter
fuzz_rooms_fuzz_cfg := alpha image cfg
# the path and CCT formats, without the tracker's rooms
fuzz_extra_fuzz_paths := paths/pathprof.c paths/cct.c paths/lines.c paths/grow.c
# the undo record alone
fuzz_extra_fuzz_undo := rewriter/undo.c
# the service's parsers, without the rooms the rest of it needs
fuzz_extra_fuzz_serve := service/config.c service/store.c service/util.c
fuzz_rooms = $(or $(fuzz_rooms_$(1)),$(fuzz_rooms_default)) common
define fuzz_rules
$(BUILD)/fuzz/$(1): tests/fuzz/$(1).c $(foreach r,$(call fuzz_rooms,$(1)),$(call room_srcs,$(r)) $(wildcard $(r)/*.h)) $(fuzz_extra_$(1))
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(CPPFLAGS_ALL) -Wall -Werror \
	    -o $$@ $$< $(foreach r,$(call fuzz_rooms,$(1)),$(call room_srcs,$(r))) $(fuzz_extra_$(1)) $(LIBS)
endef
$(foreach f,$(FUZZ_SRCS:tests/fuzz/%.c=%),$(eval $(call fuzz_rules,$(f))))
fuzz: $(FUZZERS)
	for f in $(FUZZERS); do \
	  mkdir -p $(BUILD)/fuzz/corpus-$$(basename $$f); \
	  $$f -max_total_time=$(FUZZ_SECONDS) $(BUILD)/fuzz/corpus-$$(basename $$f) tests/fuzz/seeds || exit 1; \
	done

# ---- test drivers: tests/profdb/NAME.c -> build/tests/profdb/NAME ------
PROFDB_DRIVERS := $(patsubst tests/profdb/%.c,$(BUILD)/tests/profdb/%,$(wildcard tests/profdb/*.c))
.SECONDARY: $(PROFDB_DRIVERS:$(BUILD)/tests/profdb/%=$(BUILD)/obj/tests/profdb/%.o)
$(BUILD)/tests/profdb/%: $(BUILD)/obj/tests/profdb/%.o $(ROOM_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -o $@ $< $(ROOM_LIBS) $(LIBS)

# ---- driver test programs: tests/driver/NAME.c -> build/tests/driver/NAME
DRIVER_TESTS := $(patsubst tests/driver/%.c,$(BUILD)/tests/driver/%,$(wildcard tests/driver/*.c))
.PRECIOUS: $(BUILD)/obj/tests/driver/%.o
$(BUILD)/tests/driver/%: $(BUILD)/obj/tests/driver/%.o $(BUILD)/lib/libcpo_collector.a
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -o $@ $^ $(LIBS)

# ---- cpod test programs: tests/cpod/NAME.c -> build/tests/cpod/NAME --------
CPOD_TESTS := $(patsubst tests/cpod/%.c,$(BUILD)/tests/cpod/%,$(wildcard tests/cpod/*.c))
.SECONDARY: $(CPOD_TESTS:$(BUILD)/tests/cpod/%=$(BUILD)/obj/tests/cpod/%.o)
$(BUILD)/tests/cpod/%: $(BUILD)/obj/tests/cpod/%.o $(ROOM_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -o $@ $< $(ROOM_LIBS) $(LIBS)

# ---- Alpha programs and workloads ---------------------------------------
programs:
	$(MAKE) -C tests/programs ALPHA_CC=$(ALPHA_CC) OUT=$(abspath $(BUILD))/programs
workloads:
	scripts/build-workloads.sh $(abspath $(BUILD))/workloads

# ---- whole suite, benchmarks, demo --------------------------------------
test: all $(BUILD)/tests/unit $(BUILD)/asan/tests/unit $(FUZZERS) $(DRIVER_TESTS) $(PROFDB_DRIVERS) $(CPOD_TESTS) programs workloads
	scripts/run-tests.sh
check: all $(BUILD)/tests/unit $(BUILD)/asan/tests/unit $(FUZZERS) $(DRIVER_TESTS) $(PROFDB_DRIVERS) $(CPOD_TESTS) programs workloads
	QUICK=1 scripts/run-tests.sh
bench: all $(DRIVER_TESTS) $(PROFDB_DRIVERS) $(CPOD_TESTS) programs workloads
	scripts/bench.sh
demo: all programs workloads
	scripts/demo.sh
week: all workloads
	scripts/week.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/asan/obj -name '*.d' -type f 2>/dev/null)
