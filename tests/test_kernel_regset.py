# SPDX-License-Identifier: GPL-2.0
"""The NT_X86_SHSTK_STATUS kernel series (kernel/patches-6.12, the LTS backport
of kernel/patches) in the lab: the kselftest suite on the patched and on the
stock kernel.  (The series on the newest kernel: make kernel-series.)

- patched: every regset selftest case passes;
- stock: every regset case reports SKIP because the regset is missing (EINVAL),
  none fails;
- both: the kernel's own test_shadow_stack gives the same results, its
  userfaultfd part being the known 6.12 EINVAL (a SKIP naming it, never a pass).
"""

import re

import pytest

pytestmark = pytest.mark.lab

REGSET = "kselftest.shstk-status."
SHSTK = "kselftest.shadow-stack."

# every case of tools/testing/selftests/x86/test_shstk_status.c
CASES = """
read_no_shstk read_shstk read_wrss_locked read_locked_no_shstk read_glibc_lock read_partial
read_long_buffer read_odd_size follows_tracee_prctl follows_tracer_locks follows_ssp_write
write_refused own_on_other_stack own_after_disable own_clone3 coredump_note
""".split()

# test_shadow_stack parts that must pass on both kernels (the no-uffd run
# reaches the parts after the userfaultfd one)
SHSTK_PASS = ["shadow-stack-pivot", "shadow-stack-faults", "shadow-stack-violation-test",
              "shadow-gup-test", "mprotect-test",
              "no-uffd.shadow-stack-pivot", "no-uffd.shadow-stack-faults",
              "no-uffd.shadow-stack-violation-test", "no-uffd.shadow-gup-test",
              "no-uffd.mprotect-test", "no-uffd.guard-gap-test-other-mapping-s-gaps",
              "no-uffd.guard-gap-test-placement-mapping-s-gaps", "no-uffd.ptrace-test",
              "no-uffd.32-bit-test", "no-uffd.exit"]


def results(lab, prefix):
    lab.get(REGSET + CASES[0])      # fails the test if the run did not finish
    return {n[len(prefix):]: r for n, r in lab.by_name.items() if n.startswith(prefix)}


@pytest.mark.parametrize("case", CASES)
def test_regset_case_passes_on_patched(lab_kselftest_patched, case):
    r = lab_kselftest_patched.get(REGSET + case)
    assert r["status"] == "PASS", f"{case}: {r['status']} {r['detail']}"


@pytest.mark.parametrize("case", CASES)
def test_regset_case_skips_on_stock(lab_kselftest_stock, case):
    r = lab_kselftest_stock.get(REGSET + case)
    assert r["status"] == "SKIP", f"{case}: {r['status']} {r['detail']}"
    assert "no NT_X86_SHSTK_STATUS regset" in r["detail"]


@pytest.mark.parametrize("kernel", ["patched", "stock"])
def test_no_unknown_regset_cases(request, kernel):
    lab = request.getfixturevalue(f"lab_kselftest_{kernel}")
    seen = set(results(lab, REGSET))
    assert seen == set(CASES), f"unexpected or missing cases: {sorted(seen ^ set(CASES))}"
    assert not any(r["status"] == "FAIL" for r in results(lab, "kselftest.").values())


@pytest.mark.parametrize("kernel", ["patched", "stock"])
@pytest.mark.parametrize("part", SHSTK_PASS)
def test_test_shadow_stack_passes(request, kernel, part):
    lab = request.getfixturevalue(f"lab_kselftest_{kernel}")
    r = lab.get(SHSTK + part)
    assert r["status"] == "PASS", f"{kernel} {part}: {r['status']} {r['detail']}"


@pytest.mark.parametrize("kernel", ["patched", "stock"])
def test_test_shadow_stack_userfaultfd_is_the_known_einval(request, kernel):
    lab = request.getfixturevalue(f"lab_kselftest_{kernel}")
    r = lab.get(SHSTK + "userfaultfd-test")
    # 6.12 refuses userfaultfd on shadow stack VMAs: reported, never as a pass
    assert r["status"] == "SKIP", f"{kernel}: {r['status']} {r['detail']}"
    assert re.search(r"\bEINVAL\b", r["detail"]), r["detail"]


def test_test_shadow_stack_same_on_both_kernels(lab_kselftest_patched, lab_kselftest_stock):
    patched = {n: r["status"] for n, r in results(lab_kselftest_patched, SHSTK).items()}
    stock = {n: r["status"] for n, r in results(lab_kselftest_stock, SHSTK).items()}
    assert patched == stock
