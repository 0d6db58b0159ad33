#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The OCI configs of the runc suite's container, from `runc spec`.

    runc_bundle.py SPEC_JSON OUTDIR

writes OUTDIR/config-new.json and OUTDIR/config-old.json: runc's own default
spec (namespaces pid, ipc, uts, mount, no network; its mounts, capabilities
and device rules) with a writable root, no terminal, the CET workload as the
container's init (its CET mode is the placeholder "@MODE@", which the suite
replaces) and a docker-default-style seccomp allowlist (SCMP_ACT_ERRNO for
everything else).  "new" allows arch_prctl and map_shadow_stack, as Docker's
profile does since its 2024 backports; "old" is the same list without
map_shadow_stack, as older profiles were.  runc (1.1) answers ENOSYS, not
EPERM, for a syscall newer than any the profile names, so map_shadow_stack
sees ENOSYS under "old".  config-netns.json is "new" with a network
namespace and CRIU options in OUTDIR/criu-netns.conf (see NETNS_CONF).
"""

import copy
import json
import os
import sys

# Linux x86_64 syscalls up to futex_waitv (449) less the ones Docker's default
# profile refuses (mount, ptrace, bpf, keyctl, unshare, setns, clone3, ...).
ALLOW = """
read write open close stat fstat lstat poll lseek mmap mprotect munmap brk rt_sigaction
rt_sigprocmask rt_sigreturn ioctl pread64 pwrite64 readv writev access pipe select sched_yield
mremap msync mincore madvise shmget shmat shmctl dup dup2 pause nanosleep getitimer alarm setitimer
getpid sendfile socket connect accept sendto recvfrom sendmsg recvmsg shutdown bind listen
getsockname getpeername socketpair setsockopt getsockopt clone fork vfork execve exit wait4 kill
uname semget semop semctl shmdt msgget msgsnd msgrcv msgctl fcntl flock fsync fdatasync truncate
ftruncate getdents getcwd chdir fchdir rename mkdir rmdir creat link unlink symlink readlink chmod
fchmod chown fchown lchown umask gettimeofday getrlimit getrusage sysinfo times getuid getgid setuid
setgid geteuid getegid setpgid getppid getpgrp setsid setreuid setregid getgroups setgroups
setresuid getresuid setresgid getresgid getpgid setfsuid setfsgid getsid capget capset rt_sigpending
rt_sigtimedwait rt_sigqueueinfo rt_sigsuspend sigaltstack utime mknod personality statfs fstatfs
getpriority setpriority sched_setparam sched_getparam sched_setscheduler sched_getscheduler
sched_get_priority_max sched_get_priority_min sched_rr_get_interval mlock munlock mlockall
munlockall vhangup modify_ldt prctl arch_prctl adjtimex setrlimit chroot sync sethostname
setdomainname gettid readahead setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr listxattr
llistxattr flistxattr removexattr lremovexattr fremovexattr tkill time futex sched_setaffinity
sched_getaffinity set_thread_area io_setup io_destroy io_getevents io_submit io_cancel
get_thread_area epoll_create remap_file_pages getdents64 set_tid_address restart_syscall semtimedop
fadvise64 timer_create timer_settime timer_gettime timer_getoverrun timer_delete clock_gettime
clock_getres clock_nanosleep exit_group epoll_wait epoll_ctl tgkill utimes mq_open mq_unlink
mq_timedsend mq_timedreceive mq_notify mq_getsetattr waitid ioprio_set ioprio_get inotify_init
inotify_add_watch inotify_rm_watch migrate_pages openat mkdirat mknodat fchownat futimesat
newfstatat unlinkat renameat linkat symlinkat readlinkat fchmodat faccessat pselect6 ppoll
set_robust_list get_robust_list splice tee sync_file_range vmsplice utimensat epoll_pwait signalfd
timerfd_create eventfd fallocate timerfd_settime timerfd_gettime accept4 signalfd4 eventfd2
epoll_create1 dup3 pipe2 inotify_init1 preadv pwritev rt_tgsigqueueinfo recvmmsg fanotify_init
fanotify_mark prlimit64 syncfs sendmmsg getcpu sched_setattr sched_getattr renameat2 seccomp
getrandom memfd_create execveat membarrier mlock2 copy_file_range preadv2 pwritev2 pkey_mprotect
pkey_alloc pkey_free statx io_pgetevents rseq pidfd_send_signal io_uring_setup io_uring_enter
io_uring_register pidfd_open close_range openat2 pidfd_getfd faccessat2 process_madvise epoll_pwait2
landlock_create_ruleset landlock_add_rule landlock_restrict_self memfd_secret process_mrelease
futex_waitv
""".split()

# "netns": the "new" profile with runc's own network namespace kept, and a
# CRIU configuration file for runc to hand criu swrk: CRIU locks a
# container's network namespace with iptables-restore unless told otherwise,
# and the lab has nftables, not iptables.
NETNS_CONF = "/lab/runc/criu-netns.conf"

PROFILES = {"new": ALLOW + ["map_shadow_stack"], "old": ALLOW}


def seccomp(names):
    return {"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64"],
            "syscalls": [{"names": names, "action": "SCMP_ACT_ALLOW"}]}


def container(spec, names, netns=False):
    c = copy.deepcopy(spec)
    c["process"]["terminal"] = False
    c["process"]["args"] = ["/ctr_worker", "/count", "@MODE@"]
    c["root"] = {"path": "rootfs", "readonly": False}
    c["linux"]["seccomp"] = seccomp(names)
    # "new" and "old" share the host's network namespace: CRIU would lock a
    # container's own one with iptables-restore, which the lab lacks, and
    # stock CRIU 4.1.1 crashes on a network-lock option in the configuration
    # file runc hands it (config.c reads argv[optind] with no argv in RPC
    # mode; criu-cet's patch 0010 fixes it), so only "netns" has one.  No
    # configuration file: "" tells runc not to look for /etc/criu/runc.conf.
    if netns:
        c.setdefault("annotations", {})["org.criu.config"] = NETNS_CONF
        return c
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
    c.setdefault("annotations", {})["org.criu.config"] = ""
    return c


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        spec = json.load(f)
    for name, names in PROFILES.items():
        with open(os.path.join(argv[1], f"config-{name}.json"), "w") as f:
            json.dump(container(spec, names), f, indent=1)
    with open(os.path.join(argv[1], "config-netns.json"), "w") as f:
        json.dump(container(spec, PROFILES["new"], netns=True), f, indent=1)
    with open(os.path.join(argv[1], os.path.basename(NETNS_CONF)), "w") as f:
        f.write("network-lock nftables\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
