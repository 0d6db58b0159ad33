# SPDX-License-Identifier: GPL-2.0
# ZDTM CET tests (one thread, threads, fibers, churning shadow stacks) dumped
# by criu-cet for a restore in another boot (cet-migrate-import): their work
# directories, images and recorded state, sent to the host as a blob named
# after this kernel (zdtm-from-stock, zdtm-from-patched).
kind=stock
# the other boot runs its own processes at the low pids: the dumped tests
# take theirs far above (a container's pid namespace spares real migrations this)
echo 30000 > /proc/sys/kernel/ns_last_pid
/lab/criu-cet/criu check --feature shadow_stack 2>&1 | grep -q "NT_X86_SHSTK_STATUS regset.*: yes" && kind=patched
zdtm_cet_run --dir /lab/zdtm/cet --only plain,churn,threads,fibers,fiber_thread,locked \
	--flavour "from-$kind" --criu /lab/criu-cet/criu --mode dump-only
tar -C /tmp/zdtm-cet -cz "from-$kind" | base64 | sed "s/^/@@BLOB zdtm-from-$kind /"
echo "@@BLOB zdtm-from-$kind END"
