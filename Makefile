# SPDX-License-Identifier: GPL-2.0
# criu-cet: checkpoint/restore of shadow-stack processes.
#
#   make demo    the main job: the demo in the emulated CET lab
#   make test    every test: host unit tests and the lab
#   make         build every artefact (Bochs, kernels, both CRIUs, initramfs,
#                the CET glibc and valkey overlays)
#   make install criu-cet under PREFIX (/usr/local) in DESTDIR; make deb: its package
#
# Sources come from Debian's archive (lab/build/sources.lock); builds live in build/,
# Bochs and kernels are also cached in $(CRIU_CET_CACHE).

PY		:= /usr/bin/python3
BUILD		:= $(CURDIR)/build
export CRIU_CET_CACHE ?= /var/cache/criu-cet
export BUILD

GUEST_CFLAGS	:= -static -O2 -g -Wall -Wextra -Wno-unused-parameter -fno-omit-frame-pointer \
		   -I$(CURDIR)/criu/arch/x86/cet
GUEST_SRCS	:= $(wildcard lab/guest/*.c)
GUEST_BINS	:= $(patsubst lab/guest/%.c,$(BUILD)/guest/bin/%,$(GUEST_SRCS))
# the shadow-stack ABI the guest programs share with criu-cet and the ZDTM tests
GUEST_HDRS	:= criu/arch/x86/cet/cet-abi.h lab/guest/service.h lab/guest/smash.h
INITRAMFS	:= $(BUILD)/initramfs.cpio

.PHONY: all deps sources bochs kernel kernel-patched criu-stock criu-cet guest initramfs runc-overlay podman-overlay \
	cet-glibc valkey valkey-overlay \
	demo test test-host lab clean zdtm-cet compare bench

all: bochs kernel kernel-patched criu-stock criu-cet initramfs runc-overlay valkey-overlay

deps:
	@mkdir -p $(BUILD)
	@bash lab/build/deps.sh

sources: deps
	@$(PY) lab/build/sources.py fetch --dest $(CRIU_CET_CACHE)/downloads criu bochs linux runc glibc valkey

bochs: deps
	@bash lab/build/bochs.sh

kernel: deps
	@bash lab/build/kernel.sh stock

kernel-patched: deps
	@bash lab/build/kernel.sh patched

# Kernel selftests for the lab's kselftest suite (built from kernel/patches-6.12)
.PHONY: kselftests checkpatch
kselftests: deps
	@bash lab/build/kselftests.sh

# On 6.12 LTS and on the newest kernel: each patch of the series builds a
# bzImage, the series builds without CONFIG_X86_USER_SHADOW_STACK, the
# selftest builds, checkpatch; then the newest kernel with the series boots
# in the lab and runs the selftests (about 45 min from nothing, by hand)
.PHONY: kernel-series
kernel-series: deps
	@bash lab/build/kernel-series.sh

# the CRIU series (patches/criu) applied with git am on v4.2.1, CRIU built
# at every patch
.PHONY: criu-series
criu-series: deps
	@bash lab/build/criu-series.sh

# The kernel's own scripts/checkpatch.pl --strict on both forms of the series,
# each by the checkpatch of the kernel it is for: kernel/patches (as posted,
# on the newest kernel) and kernel/patches-6.12 (its LTS backport)
checkpatch: deps
	@bash lab/build/linux-source.sh lts
	@bash lab/build/linux-source.sh new
	@bash lab/build/checkpatch.sh $(BUILD)/linux-src-new $(filter-out %/0000-cover-letter.patch,$(wildcard kernel/patches/*.patch))
	@bash lab/build/checkpatch.sh $(BUILD)/linux-src $(filter-out %/0000-cover-letter.patch,$(wildcard kernel/patches-6.12/*.patch))

criu-stock: deps
	@bash lab/build/criu.sh stock

criu-cet: deps
	@bash lab/build/criu.sh cet

guest: $(GUEST_BINS)

$(BUILD)/guest/bin/%: lab/guest/%.c $(GUEST_HDRS)
	@mkdir -p $(dir $@)
	gcc $(GUEST_CFLAGS) -o $@ $<

# rpc_cet speaks CRIU's RPC with criu-cet's libcriu (and its protobuf-c
# messages), both linked in statically like every guest program
CRIU_CET_SRC	:= $(BUILD)/criu-cet/src
$(BUILD)/guest/bin/rpc_cet: lab/guest/rpc_cet.c criu-cet
	@mkdir -p $(dir $@)
	@$(MAKE) -s -C $(CRIU_CET_SRC) NO_GNUTLS=1 lib > $(BUILD)/criu-cet/build-lib.log 2>&1 || \
		{ tail -20 $(BUILD)/criu-cet/build-lib.log; exit 1; }
	gcc $(GUEST_CFLAGS) -iquote $(CRIU_CET_SRC)/lib/c -iquote $(CRIU_CET_SRC)/criu/include -iquote $(CRIU_CET_SRC)/images -o $@ $< \
		$(CRIU_CET_SRC)/lib/c/libcriu.a -lprotobuf-c

# ZDTM CET tests (test/zdtm/cet), built against CRIU's ZDTM lib, in /lab/zdtm/cet
zdtm-cet: criu-cet
	@bash test/zdtm/cet/lab-build.sh $(CRIU_CET_SRC) $(BUILD)/zdtm-cet

initramfs: criu-stock criu-cet guest zdtm-cet kselftests
	@LAB_EXTRA="$(BUILD)/zdtm-cet/stage:/lab/zdtm/cet $(BUILD)/guest/kbin:/lab/bin" \
		bash lab/build/initramfs.sh $(INITRAMFS) $(BUILD)/guest/bin $(BUILD)/criu-stock $(BUILD)/criu-cet

# runc (pin runc) and the runc suite's OCI configs, added to the guest as an
# overlay by the runc tests: make lab SUITES=runc OVERLAY=build/overlay-runc
runc-overlay: deps
	@bash lab/overlays/runc.sh > /dev/null

# podman 4.3.1 and conmon 2.1.6 (pins podman, conmon, ...) and their lab
# configuration, for the podman suite only (the libraries either CRIU loads
# are in the initramfs already), beside the runc and migrate
# overlays: run.py --suites podman --overlay build/overlay-migrate
# --overlay build/overlay-runc --overlay build/overlay-podman
podman-overlay: deps criu-stock criu-cet
	@bash lab/overlays/podman.sh > /dev/null

# A CET userland for the guest: glibc 2.41 --enable-cet (pin glibc) in the
# sysroot build/cet-glibc, for the guest path /opt/cet-glibc.  Guest programs
# build against it with $(CET_CC) (lab/build/cet-cc: -fcf-protection, its headers,
# crt files, libraries and loader; every object SHSTK-marked or the link
# fails) and run on glibc's locked shadow stacks with
# GLIBC_TUNABLES=glibc.cpu.hwcaps=SHSTK in a guest booted with an overlay
# holding its runtime: build/overlay-cet-glibc (cet-glibc-overlay, with the
# suite cet-glibc's probe, the ZDTM glibc tests, criu on the CET glibc) or
# build/overlay-valkey (all that and valkey).
CET_CC		:= $(CURDIR)/lab/build/cet-cc
CET_GLIBC	:= $(BUILD)/cet-glibc
.PHONY: cet-glibc-overlay
cet-glibc: deps
	@bash lab/build/glibc.sh

# the glibc overlay also holds both criu relinked for the CET glibc
cet-glibc-overlay: deps criu-stock criu-cet zdtm-cet
	@bash lab/overlays/cet-glibc.sh > /dev/null

# valkey 8.1.1 (pin valkey) on the CET glibc, and its overlay for the
# valkey suite and make demo: make lab SUITES=cet-glibc,valkey OVERLAY=build/overlay-valkey
valkey: deps
	@bash lab/build/valkey.sh

valkey-overlay: deps criu-stock criu-cet zdtm-cet
	@bash lab/overlays/valkey.sh > /dev/null

# One lab run by hand: make lab SUITES=basics,criu-baseline [KERNEL=patched]
SUITES	?= basics
KERNEL	?= stock
OVERLAY	?=
lab: all
	$(PY) lab/run.py --suites $(SUITES) --kernel $(KERNEL) --echo $(if $(OVERLAY),--overlay $(OVERLAY))

# every ZDTM CET test in the lab with criu-cet, stock CRIU 4.1.1 and CRIU 4.2.1, side by side
compare: all
	$(PY) lab/reports/compare.py --run

# dump/restore cost of shadow stacks in the lab, criu-cet vs stock 4.1.1 and 4.2.1 (figures, not tests)
bench: bochs kernel initramfs
	$(PY) lab/reports/bench.py --run

# 600 damaged CET images restored in the lab: refused or restored exactly, never a
# crash, hang or stray task (make test runs a 96-image sample of the same seed)
.PHONY: fuzz
FUZZ_COUNT ?= 600
fuzz: all
	$(PY) lab/reports/fuzz.py --run --count $(FUZZ_COUNT)

# criu-cet installed like a distribution's criu (PREFIX, DESTDIR), and as a
# Debian package that takes criu's place: build/deb/criu-cet_<version>_amd64.deb
.PHONY: install deb
PREFIX ?= /usr/local
install: criu-cet
	@bash lab/packaging/install.sh $(PREFIX) $(DESTDIR)

deb: criu-cet
	@bash lab/packaging/deb.sh

# CRIU's own ZDTM suite in the lab, by CRIU's own zdtm.py: the base CRIU's
# tests built plain and as shadow-stack tests (lab/build/zdtm-upstream.sh),
# Python for the guest (lab/overlays/zdtm-runtime.sh), as an overlay
.PHONY: zdtm zdtm-flows zdtm-overlay
zdtm-overlay: deps criu-stock criu-cet zdtm-cet
	@bash lab/overlays/zdtm.sh > /dev/null

# the whole default set: criu-cet, its base CRIU 4.2.1 and stock 4.1.1,
# plain and on shadow stacks, both kernels; the per-test matrix and a line
# a kernel (ZDTM_ARGS="--kernels stock --tests LIST --repeat 3 ..." narrows it)
zdtm: all zdtm-overlay
	$(PY) lab/reports/zdtm_matrix.py --run $(ZDTM_ARGS)

# the same set on shadow stacks through zdtm.py's --pre 2, --page-server,
# --lazy-pages and --rpc, criu-cet
zdtm-flows: all zdtm-overlay
	$(PY) lab/reports/zdtm_matrix.py --run --flows $(ZDTM_ARGS)

# steadiness: the same set on shadow stacks, each test C/R'd three times in
# a row by criu-cet (zdtm.py --iters 3)
.PHONY: zdtm-steady
zdtm-steady: all zdtm-overlay
	$(PY) lab/reports/zdtm_matrix.py --run --steady $(ZDTM_ARGS)

# CRIU's own ZDTM tests on the host (no CET) with stock 4.1.1 and criu-cet,
# side by side; its verdict says when this host's kernel cannot run them
.PHONY: zdtm-host
zdtm-host: criu-stock criu-cet
	@bash lab/reports/zdtm-host.sh both

# valkey on glibc's shadow stacks, checkpointed and restored by criu-cet
demo: all
	@$(PY) lab/run.py --suites demo --show "demo:" --overlay $(BUILD)/overlay-valkey

# valkey on glibc's shadow stacks moved from machine A to machine B over the
# lab's network (page server, lazy pages, --tcp-established) and migrations
# that fail on purpose: both kernels, and from the stock kernel to the
# patched one; a machine B without user shadow stacks; a rolling upgrade;
# and zdtm.py's migration flows on both kernels; podman's checkpoint
# --export and restore --import on one machine and from A to B.  make test
# runs a sample: one pair, zdtm.py's flows on the stock kernel, no podman
# boot yet (LAB_MIGRATE_ALL)
.PHONY: migrate-net
migrate-net: all
	LAB_MIGRATE_ALL=1 $(PY) -m pytest -v tests/test_two_machines.py tests/test_migration.py tests/test_podman.py

test-host: deps
	$(PY) -m pytest -q tests -m "not lab"

# CRIU's own ZDTM on the host is its own target (make zdtm-host): on a host
# whose kernel hangs CRIU 4.1.1 it only waits out zdtm.py's timeouts
test: all
	$(PY) -m pytest -v --durations=30 -m "not host_zdtm" tests

clean:
	rm -rf $(BUILD)
