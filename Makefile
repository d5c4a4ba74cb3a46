# smc-tools: tools for Linux Shared Memory Communications (SMC-R, SMC-D)
#
#   make                 build every tool and libsmc-preload.so
#   make check           unit tests, fuzzing, command-line tests (ASan/UBSan build)
#   make check-kernel    the tools against Debian's kernels (6.1 to the newest) under QEMU
#   make check-soft-roce soft SMC-R under QEMU on a kernel without SMC
#   make check-s390x     the cross build, its unit tests and the tools in IBM Z guests
#   make install         PREFIX, DESTDIR, BINDIR, LIBDIR, MANDIR honoured
#   make demo            the toolset end to end on this machine
#   make clean

VERSION := $(shell sed -n 's/.*SMC_TOOLS_RELEASE "\(.*\)".*/\1/p' lib/version.h)

PREFIX   ?= /usr
BINDIR   ?= $(PREFIX)/bin
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR   ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
MANDIR   ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
DATADIR  ?= $(PREFIX)/share/smc-tools
DESTDIR  ?=

# Output directory: "." for the normal build, build/check for the test build.
O        ?= .
# without a leading "./" (O=. by default), as make names the files it builds
OBJ      := $(patsubst ./%,%,$(O)/.obj)

CC       ?= cc
PKG_CONFIG ?= pkg-config
PKGS     := libnl-3.0 libnl-genl-3.0 libmnl
# liburing: its header only (the preload reads the rings of a program's liburing);
# libibverbs: its header only (the preload opens it at run time for soft SMC-R)
DEP_PKGS := $(PKGS) liburing libibverbs
DEBIAN_PKGS := libnl-3-dev libnl-genl-3-dev libmnl-dev liburing-dev libibverbs-dev pkg-config

CFLAGS   ?= -O2 -g
WFLAGS   := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror
ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS := $(WFLAGS) $(CFLAGS) $(SANFLAGS) $(PKG_CFLAGS) -I. -Ilib -Iwire -MMD -MP
SOFT_CFLAGS := $(WFLAGS) $(CFLAGS) $(SANFLAGS) $(PKG_CFLAGS) -Ilib -Iwire -MMD -MP
LDLIBS     := $(PKG_LIBS) -lm

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s%s\n' $(1) $(2)
endif

LIB_SRCS  := $(wildcard lib/*.c)
SMC_SRCS  := $(wildcard smc/*.c)
TOOL_SRCS := pnet.c smcss_print.c $(wildcard rnics/*.c)
# wire/: what the preload and smc_softd share (the ring, the message formats);
# it includes nothing from soft/ or preload/ (doc/soft-netlink.md 7)
WIRE_SRCS := $(wildcard wire/*.c)
# soft/: the daemon in layers, lowest first (doc/layers.md).  A layer's
# sources see the headers of their own folder and of the layers below only.
SOFT_LAYERS := base nl registry fabric capture service families runtime
SOFT_I_base     := -Isoft/base
SOFT_I_nl       := $(SOFT_I_base) -Isoft/nl
SOFT_I_registry := $(SOFT_I_nl) -Isoft/registry
SOFT_I_fabric   := $(SOFT_I_registry) -Isoft/fabric
SOFT_I_capture  := $(SOFT_I_fabric) -Isoft/capture
SOFT_I_service  := $(SOFT_I_capture) -Isoft/service
SOFT_I_families := $(SOFT_I_service) -Isoft/families
SOFT_I_runtime  := $(SOFT_I_families) -Isoft/runtime
SOFT_SRCS := $(filter-out soft/runtime/smc_softd.c,$(wildcard $(SOFT_LAYERS:%=soft/%/*.c))) $(WIRE_SRCS)
SOFT_OBJS := $(SOFT_SRCS:%.c=$(OBJ)/%.o)
LIB_OBJS  := $(LIB_SRCS:%.c=$(OBJ)/%.o)
SMC_OBJS  := $(SMC_SRCS:%.c=$(OBJ)/%.o)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(OBJ)/%.o)
# the parts shared with the daemon (wire/) are linked into the preload as well
# preload/: the library in layers, lowest first (doc/layers.md), each
# compiled with the include paths of itself and the layers below.
PRELOAD_LAYERS := base rdma smcr transport conn share hooks
PRELOAD_I_base      := -Ipreload/base
PRELOAD_I_rdma      := $(PRELOAD_I_base) -Ipreload/rdma
PRELOAD_I_smcr      := $(PRELOAD_I_rdma) -Ipreload/smcr
PRELOAD_I_transport := $(PRELOAD_I_smcr) -Ipreload/transport
PRELOAD_I_conn      := $(PRELOAD_I_transport) -Ipreload/conn
PRELOAD_I_share     := $(PRELOAD_I_conn) -Ipreload/share
PRELOAD_I_hooks     := $(PRELOAD_I_share) -Ipreload/hooks
PRELOAD_SRCS := $(wildcard $(PRELOAD_LAYERS:%=preload/%/*.c)) $(WIRE_SRCS) lib/soft_socket.c
PRELOAD_OBJS := $(PRELOAD_SRCS:%.c=$(OBJ)/pic/%.o)
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(OBJ)/%.o)

PROGS    := $(O)/smc_pnet $(O)/smcss $(O)/smcd $(O)/smcr $(O)/smc_run $(O)/libsmc-preload.so \
	    $(O)/smc_softd $(if $(wildcard smc_rnics.c),$(O)/smc_rnics) \
	    $(if $(wildcard smc_dbg.sh),$(O)/smc_dbg) $(if $(wildcard smc_chk.sh),$(O)/smc_chk) \
	    $(O)/smcdump-ex
LIBSMC   := $(OBJ)/libsmc.a

.PHONY: check-layers install-deps bench bench-quick bench-programs check-kernel check-soft-roce check-s390x check-random check-random-long test-progs all check check-unit check-cli fuzz demo soak install clean deps
all: $(PROGS)

deps:
	@$(PKG_CONFIG) --exists $(DEP_PKGS) 2>/dev/null || { \
	  echo "smc-tools: missing build dependencies ($(DEP_PKGS))." >&2; \
	  echo "smc-tools: install them with: apt-get install $(DEBIAN_PKGS)" >&2; \
	  echo "smc-tools: (or run scripts/install-deps.sh)" >&2; exit 1; }

$(OBJ)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The daemon's objects: no -I., their layer's include chain (SOFT_I_<layer>).
$(OBJ)/soft/%.o: soft/%.c | deps
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SOFT_CFLAGS) $(SOFT_I_$(word 2,$(subst /, ,$<))) -c -o $@ $<
# Tests reach every layer.
$(OBJ)/tests/%.o: ALL_CFLAGS += $(SOFT_I_runtime)

# The preload's objects see wire/, lib/ and their layer's include chain
# only (no -I.): a daemon header (soft/) is out of their reach.
PIC_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(CFLAGS) -fPIC -fvisibility=hidden \
	-Iwire -Ilib -MMD -MP
$(OBJ)/pic/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PIC_CFLAGS) -c -o $@ $<
$(OBJ)/pic/preload/%.o: preload/%.c | deps
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PIC_CFLAGS) $(PRELOAD_I_$(word 2,$(subst /, ,$<))) -c -o $@ $<

$(LIBSMC): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(O)/smc_pnet: $(OBJ)/smc_pnet.o $(OBJ)/pnet.o $(LIBSMC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(O)/smcss: $(OBJ)/smcss.o $(OBJ)/smcss_print.o $(LIBSMC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(O)/smcd: $(OBJ)/smc.o $(SMC_OBJS) $(LIBSMC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(O)/smc_softd: $(OBJ)/soft/runtime/smc_softd.o $(SOFT_OBJS) $(LIBSMC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# smc_rnics: main in smc_rnics.c, the testable parts in rnics/*.c
$(O)/smc_rnics: $(OBJ)/smc_rnics.o $(patsubst %.c,$(OBJ)/%.o,$(wildcard rnics/*.c)) $(LIBSMC)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# Scripts get the release string (and LIBDIR) at build time.
$(O)/smc_dbg: smc_dbg.sh lib/version.h
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@VERSION@|$(VERSION)|g' $< > $@ && chmod 755 $@
$(O)/smc_chk: smc_chk.sh lib/version.h
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@VERSION@|$(VERSION)|g' $< > $@ && chmod 755 $@

$(O)/smcdump-ex: smcdump-ex.py
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)
	$(Q)install -m 755 $< $@

$(O)/smcr: $(O)/smcd
	$(Q)ln -sf smcd $@

$(O)/libsmc-preload.so: $(PRELOAD_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -shared -fPIC -Wl,-soname,libsmc-preload.so.1 -Wl,-z,defs -o $@ $^ -ldl

$(O)/smc_run: smc_run.sh lib/version.h
	@mkdir -p $(dir $@)
	$(call msg,GEN,$@)
	$(Q)sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' $< > $@ && chmod 755 $@

# ---- tests -------------------------------------------------------------
# The link groups of preload/smcr/ and the transports over a fake of preload/rdma/ (tests/unit/fake_rdma.c).
SMCR_LAYER_OBJS := $(patsubst %.c,$(OBJ)/pic/%.o,$(wildcard preload/smcr/*.c) preload/rdma/fds.c preload/rdma/retire.c preload/base/thread.c \
	$(wildcard preload/transport/*.c))
$(OBJ)/tests/unit/test_smcr_lgr.o $(OBJ)/tests/unit/test_smcr_rebuild.o $(OBJ)/tests/unit/fake_rdma.o: ALL_CFLAGS += $(PRELOAD_I_smcr)
$(OBJ)/tests/unit/test_transport_rdma.o $(OBJ)/tests/unit/test_rdma_clc.o $(OBJ)/tests/unit/test_transport_kinds.o $(OBJ)/tests/unit/rdmafx.o: ALL_CFLAGS += $(PRELOAD_I_transport)
# preload/rdma/verbs_qp.c itself, over a fake verbs device (renamed beside fake_rdma.c's stand-ins).
$(OBJ)/tests/unit/test_verbs_qp.o: ALL_CFLAGS += $(PRELOAD_I_rdma)
$(OBJ)/tests/unit/test_conn_io.o $(OBJ)/tests/unit/test_child_fds.o $(OBJ)/tests/unit/test_fork_share.o $(OBJ)/tests/unit/test_fork_claim.o: ALL_CFLAGS += $(PRELOAD_I_conn)
# The connection layer (preload/conn/ over preload/base/), for io.c over the fake RDMA (tests/unit/test_conn_io.c) and child_fds.c.
CONN_LAYER_OBJS := $(patsubst %.c,$(OBJ)/pic/%.o,$(wildcard preload/conn/*.c) $(wildcard preload/base/*.c))
$(O)/tests/unit_tests: $(UNIT_OBJS) $(TOOL_OBJS) $(SMC_OBJS) $(SOFT_OBJS) $(SMCR_LAYER_OBJS) $(CONN_LAYER_OBJS) $(LIBSMC)
	@mkdir -p $(dir $@)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

# Small programs the command-line tests run (tests/progs/NAME.c -> $(O)/tests/NAME).
TEST_PROGS := $(patsubst tests/progs/%.c,$(O)/tests/%,$(wildcard tests/progs/*.c))
$(O)/tests/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) -o $@ $< -ldl
# A server with a liburing instance, as MariaDB has (soft_uring.bats).
$(O)/tests/uring_conn: tests/progs/uring_conn.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) -o $@ $< -luring
# Shared test helpers (tests/progs/lib*.c) are built as preloadable libraries.
$(O)/tests/lib%.so: tests/progs/lib%.c
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) -fPIC -shared -o $@ $< -ldl
TEST_PROGS := $(patsubst $(O)/tests/lib%,$(O)/tests/lib%.so,$(TEST_PROGS))
# Clients of the soft backend's private family use its client code (no libnl).
$(O)/tests/soft_client: tests/progs/soft_client.c wire/reg_client.c lib/soft_socket.c $(wildcard wire/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) -I. -Ilib -o $@ tests/progs/soft_client.c wire/reg_client.c lib/soft_socket.c
CLC_RELAY_SRCS := tests/progs/clc_relay.c wire/reg_client.c lib/soft_socket.c wire/clc.c wire/clc_accept.c wire/clc_proposal.c
$(O)/tests/clc_relay: $(CLC_RELAY_SRCS) $(wildcard wire/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) -I. -Ilib -Iwire -o $@ $(CLC_RELAY_SRCS)

# PAIR's test client maps the region too (tests/progs/pair/ keeps it out of
# the one-file rule above).
$(O)/tests/soft_pair: tests/progs/pair/soft_pair.c wire/reg_client.c wire/dmb.c lib/soft_socket.c \
		$(wildcard wire/*.h lib/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) $(SANFLAGS) -I. -Ilib -o $@ $(filter %.c,$^)
TEST_PROGS += $(O)/tests/soft_pair

# Soft SMC-R's building blocks between two hosts (tests/vm/guest/s5.sh): the
# preload's rdma/ layer and the wire formats, without the rest of the preload.
SMCR_STREAM_SRCS := preload/base/thread.c $(wildcard tests/progs/smcr/*.c preload/rdma/*.c wire/clc*.c wire/smcr_*.c)
$(O)/tests/smcr_stream: $(SMCR_STREAM_SRCS) $(wildcard tests/progs/smcr/*.h preload/rdma/*.h wire/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) $(SANFLAGS) -Iwire -Ipreload/base -Ipreload/rdma -o $@ $(SMCR_STREAM_SRCS) -ldl -lpthread
TEST_PROGS += $(O)/tests/smcr_stream

# The preload's soft SMC-R layer between two hosts (tests/vm/guest/s6.sh):
# rdma/ and smcr/, without the layers above them.
SMCR_CONNS_SRCS := tests/progs/smcr_conns/smcr_conns.c tests/progs/smcr/smcr_handshake.c \
	preload/base/thread.c $(wildcard preload/rdma/*.c preload/smcr/*.c wire/clc*.c wire/smcr_*.c)
$(O)/tests/smcr_conns: $(SMCR_CONNS_SRCS) $(wildcard tests/progs/smcr/*.h preload/base/*.h preload/rdma/*.h preload/smcr/*.h wire/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(WFLAGS) $(CFLAGS) $(SANFLAGS) -Iwire -Ipreload/base -Ipreload/rdma -Ipreload/smcr -Itests/progs/smcr \
		-o $@ $(SMCR_CONNS_SRCS) -ldl -lpthread
TEST_PROGS += $(O)/tests/smcr_conns

CHECK_DIR := build/check
# The README's two commands work on a bare machine: both install the build
# dependencies first (scripts/install-deps.sh), before anything needs them.
check: install-deps
	$(Q)$(MAKE) --no-print-directory O=$(CHECK_DIR) SANITIZE=1 all $(CHECK_DIR)/tests/unit_tests test-progs
	$(Q)CHECK_DIR=$(CHECK_DIR) tests/run.sh

# The layering rule of doc/layers.md, read off the daemon's and the
# preload's objects.
check-layers: $(SOFT_OBJS) $(OBJ)/soft/runtime/smc_softd.o $(PRELOAD_OBJS)
	$(Q)scripts/check-layers.sh $(OBJ) soft $(SOFT_LAYERS) -- $(filter $(OBJ)/soft/%,$^); \
	  soft=$$?; scripts/check-layers.sh $(OBJ)/pic preload $(PRELOAD_LAYERS) -- \
	  $(filter $(OBJ)/pic/preload/%,$^) && exit $$soft

# The fuzz target is built with clang's libFuzzer; tests/run.sh runs it briefly.
FUZZ_SRCS := $(wildcard tests/fuzz/*.c) $(LIB_SRCS) $(SMC_SRCS) $(TOOL_SRCS) $(SOFT_SRCS)
$(CHECK_DIR)/fuzz_replies: $(FUZZ_SRCS) $(wildcard lib/*.h smc/*.h soft/*/*.h wire/*.h tests/fuzz/*.h *.h)
	@mkdir -p $(dir $@)
	$(call msg,FUZZ,$@)
	$(Q)clang -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  $(PKG_CFLAGS) -I. -Ilib -Iwire $(SOFT_I_runtime) -o $@ $(FUZZ_SRCS) $(LDLIBS)
fuzz: $(CHECK_DIR)/fuzz_replies

# Benchmarks (never part of make check): see bench/README.md.
$(O)/bench/dmb_bench: bench/dmb_bench.c wire/dmb.c wire/dmb.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O2 -I. -Ilib -o $@ bench/dmb_bench.c wire/dmb.c -lpthread
# The ring alone, then real programs: plain TCP against smc_run (bench/README.md).
bench: all $(O)/bench/dmb_bench test-progs
	$(Q)$(O)/bench/dmb_bench
	$(Q)bench/run.sh
	$(Q)bench/programs.sh
	$(Q)bench/smcss_rows.sh

bench-quick: all
	$(Q)bench/run.sh --quick

# Programs we did not write (pgbench, rsync, scp, curl, redis-benchmark, wrk):
# throughput and CPU per transaction or GB, TCP against smc_run.
bench-programs: all
	$(Q)bench/programs.sh

# Every tool against Debian's kernels booted under QEMU: 6.12, 6.1, 6.17 and
# the newest, which has no SMC (tests/vm/matrix.sh, doc/kernels.md).
check-kernel:
	$(Q)tests/vm/matrix.sh

# Soft SMC-R under QEMU on the newest kernel Debian serves, which has no SMC
# at all (doc/soft-roce.md): the host's rxe device as the soft backend's
# SMC-R device (s3), two hosts with their own daemons (s4), and soft SMC-R's
# building blocks between two hosts: CLC, a queue pair, RDMA WRITE and CDC (s5),
# ... redis under smc_run at both ends (s21), a peer killed (s22), rsync (s23), and socat's forking server (s24).
check-soft-roce:
	$(Q)VM_SUITE=trixie-backports tests/vm/run.sh s3 s4 s5 s6 s7 s8 s9 s10 s11 s12 s18 s19 s20 s21 s22 s23 s24

# IBM Z (big-endian): the project cross-built for s390x with -Werror against
# Debian's s390x user space, then in s390x guests of Debian's 6.12 (QEMU's
# TCG): the unit tests (u1), the tools against the kernel (s1), a real
# SMC-R connection between two of them over rxe (s2), the soft backend's
# devices there (s3), soft SMC-R between two of them (s4), and between an
# s390x server and an x86 client (s17: on 6.12 their rxe devices cannot
# talk, so it falls back).
check-s390x:
	$(Q)VM_ARCH=s390x tests/vm/run.sh u1 s1 s2 s3 s4 s17

# Random socket operations under smc_run against a private smc_softd
# (tests/progs/sockfuzz.c, tests/random.sh): replay one seed with every
# operation shown, or run COUNT seeds from FIRST.  EXCLUDE: operation kinds
# to leave out (sockfuzz -l); by default every kind runs.
SEED ?= 1
FIRST ?= 1
COUNT ?= 10000
EXCLUDE ?=
RANDOM_X = $(if $(EXCLUDE),-x $(EXCLUDE))
check-random:
	$(Q)$(MAKE) --no-print-directory O=$(CHECK_DIR) SANITIZE=1 all test-progs
	$(Q)tests/random.sh $(CHECK_DIR) -V -s $(SEED) $(RANDOM_X)

check-random-long:
	$(Q)$(MAKE) --no-print-directory O=$(CHECK_DIR) SANITIZE=1 all test-progs
	$(Q)tests/random.sh $(CHECK_DIR) -k -S $(FIRST) -n $(COUNT) $(RANDOM_X)

demo:
	$(Q)scripts/demo.sh

# Real programs under smc_run for SOAK_MINUTES (default 60), every byte
# checked, descriptors, rings, RSS and smcss rows sampled: all must stay
# flat (tests/soak.sh).  Not part of make check.
SOAK_DIR := build/soak
soak:
	$(Q)$(MAKE) --no-print-directory O=$(SOAK_DIR) all
	$(Q)O=$(SOAK_DIR) tests/soak.sh

install-deps:
	$(Q)scripts/install-deps.sh

test-progs: $(TEST_PROGS)

# ---- install -----------------------------------------------------------
MAN7 := man/af_smc.7
MAN8 := $(wildcard man/*.8)
# The systemd unit of smc_softd (contrib/systemd/, @BINDIR@ filled in);
# Debian 12 packages put it in /lib/systemd/system (debian/rules says so).
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# every tool the completion file registers gets its name there
COMPLETION_NAMES := smc_pnet smcss smcd smcr smc_run smcdump-ex smc_softd smc_rnics smc_dbg smc_chk

# The build of $(O) is installed (make O=DIR install).
install: all
	install -d -m 755 $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
	  $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(COMPLETIONDIR) \
	  $(DESTDIR)$(DATADIR)/wireshark $(DESTDIR)$(SYSTEMDUNITDIR)
	install -m 755 $(addprefix $(O)/,smc_pnet smcss smcd smc_softd smcdump-ex) $(DESTDIR)$(BINDIR)/
	install -m 644 contrib/wireshark/smc_dump.lua $(DESTDIR)$(DATADIR)/wireshark/
	for t in smc_rnics smc_dbg smc_chk; do \
	  if [ -f $(O)/$$t ]; then install -m 755 $(O)/$$t $(DESTDIR)$(BINDIR)/; fi; done
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' smc_run.sh > $(DESTDIR)$(BINDIR)/smc_run
	chmod 755 $(DESTDIR)$(BINDIR)/smc_run
	ln -sf smcd $(DESTDIR)$(BINDIR)/smcr
	install -m 644 $(O)/libsmc-preload.so $(DESTDIR)$(LIBDIR)/libsmc-preload.so
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/
	install -m 644 $(MAN8) $(DESTDIR)$(MANDIR)/man8/
	sed -e 's|@BINDIR@|$(BINDIR)|g' contrib/systemd/smc_softd.service.in \
	  > $(DESTDIR)$(SYSTEMDUNITDIR)/smc_softd.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/smc_softd.service
	@if [ -f completion/smc-tools ]; then \
	  install -m 644 completion/smc-tools $(DESTDIR)$(COMPLETIONDIR)/smc-tools; \
	  for t in $(COMPLETION_NAMES); do \
	    ln -sf smc-tools $(DESTDIR)$(COMPLETIONDIR)/$$t; done; fi

clean:
	$(call msg,CLEAN,.)
	$(Q)rm -rf .obj build smc_pnet smcss smcd smcr smc_run libsmc-preload.so smc_softd \
	  smc_rnics smc_dbg smc_chk smcdump-ex

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
