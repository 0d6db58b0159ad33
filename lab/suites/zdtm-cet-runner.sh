# SPDX-License-Identifier: GPL-2.0
# Our ZDTM CET tests where zdtm.py cannot judge them (make test runs all of
# them under zdtm.py: suites zdtm-upstream-cet and zdtm-upstream-stock):
# cycles, five C/Rs in a row with SIGUSR2 after each, so that the test
# re-verifies itself every time; fiber_thread and fiber_thread_unknown,
# whose dump log says how criu-cet learned which shadow stack the kernel
# owns (the runner keeps it; zdtm.py drops the logs of a test that passed).
export LAB_ZDTM_CET_ONLY=cycles,fiber_thread,fiber_thread_unknown
. /lab/suites/zdtm-cet-ours.sh
