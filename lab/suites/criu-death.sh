# SPDX-License-Identifier: GPL-2.0
# criu dies during a dump: killed by its own fault injection right after it
# infected the task (CRIU_FAULT=1, "sudden detach"), with the parasite's
# connect failing (CRIU_FAULT=5), and SIGKILLed at points spread over the
# dump (as an OOM kill, an operator or an orchestrator's timeout would).
# Every time, the task must run on with its CET state exactly as before:
# one and many threads, WRSS on and off, glibc's lock (lib.sh: death_cases).
# Then criu dies during a restore: before its end nothing restored may stay
# behind, after it the tasks run on (lib.sh: restore_death_cases).
death_cases /lab/criu-cet/criu ""
restore_death_cases /lab/criu-cet/criu ""
