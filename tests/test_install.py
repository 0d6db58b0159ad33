# SPDX-License-Identifier: GPL-2.0
"""criu-cet installed: `make install` (PREFIX, DESTDIR) puts criu, libcriu,
pycriu (with criu-cet's cet.proto) and crit in place and they work from
there; `make deb` builds a Debian package that takes criu's place; and the
package really installs on this Debian 12 machine, is used, and is removed."""

import os
import shutil
import subprocess

import pytest

from conftest import TOP

MULTIARCH = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                           text=True).stdout.strip()
NO_CET_REASON = "this host cannot checkpoint or restore shadow-stack tasks"


def make(*args):
    p = subprocess.run(["make", "-s", "-C", TOP, *args], capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return p.stdout


def host_has_user_shstk():
    with open("/proc/cpuinfo") as f:
        return any(line.startswith("flags") and " user_shstk" in line for line in f)


def check_installed_criu(criu):
    """The installed binary is criu-cet and its check feature answers."""
    out = subprocess.run([criu, "--version"], capture_output=True, text=True).stdout
    assert out.startswith("Version: 4.1.1\nFlavour: criu-cet")
    p = subprocess.run([criu, "check", "--feature", "shadow_stack"], capture_output=True, text=True)
    if host_has_user_shstk():
        assert p.returncode == 0
    else:
        assert p.returncode != 0 and NO_CET_REASON in p.stdout + p.stderr


def cet_core_round_trip(python_env, crit):
    """pycriu writes a core image with a criu-cet entry and the installed
    crit decodes it back: cet.proto is in the installed pycriu."""
    script = (
        "import sys, pycriu\n"
        "img = {'magic': 'CORE', 'entries': [{'mtype': 'X86_64', 'tc': {'task_state': 1, 'exit_code': 0, "
        "'personality': 0, 'flags': 0, 'blk_sigset': 0, 'comm': 'svc'}, "
        "'cet': {'version': 2, 'features': 1, 'locked': 18446744073709551615, 'ssp': 140737488351224}}]}\n"
        "with open(sys.argv[1], 'wb') as f:\n"
        "    pycriu.images.dump(img, f)\n")
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"core-{os.getpid()}.img")
    try:
        subprocess.run(["/usr/bin/python3", "-c", script, path], env=python_env, check=True)
        out = subprocess.run(["/usr/bin/python3", crit, "decode", "-i", path, "--pretty"], env=python_env,
                             capture_output=True, text=True, check=True).stdout
    finally:
        if os.path.exists(path):
            os.unlink(path)
    assert '"cet": {' in out and '"locked": "0xffffffffffffffff"' in out and '"ssp": "0x7fffffffeff8"' in out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    dest = str(tmp_path_factory.mktemp("destdir"))
    make("install", "PREFIX=/usr", f"DESTDIR={dest}")
    return dest


def test_make_install_puts_everything_in_place(installed):
    for path in ("usr/sbin/criu", "usr/sbin/criu-ns", "usr/bin/crit",
                 f"usr/lib/{MULTIARCH}/libcriu.so.2", f"usr/lib/{MULTIARCH}/pkgconfig/criu.pc",
                 "usr/include/criu/criu.h", "usr/lib/python3/dist-packages/pycriu/images/cet_pb2.py",
                 "usr/lib/python3/dist-packages/crit/__main__.py"):
        assert os.path.exists(os.path.join(installed, path)), path


def test_installed_criu_and_crit_work(installed):
    check_installed_criu(os.path.join(installed, "usr/sbin/criu"))
    env = dict(os.environ, PYTHONPATH=os.path.join(installed, "usr/lib/python3/dist-packages"))
    cet_core_round_trip(env, os.path.join(installed, "usr/bin/crit"))


def test_make_install_default_prefix(tmp_path):
    make("install", f"DESTDIR={tmp_path}")
    ver = subprocess.run(["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True).stdout.strip()
    assert os.path.exists(tmp_path / "usr/local/sbin/criu")
    assert os.path.exists(tmp_path / f"usr/local/lib/python{ver}/dist-packages/pycriu/__init__.py")


@pytest.fixture(scope="module")
def deb():
    path = make("deb").strip().splitlines()[-1]
    assert path.endswith("_amd64.deb") and os.path.exists(path), path
    return path


def test_deb_takes_criu_s_place(deb):
    def field(name):
        return subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True, text=True).stdout.strip()
    assert field("Package") == "criu-cet" and field("Version").startswith("4.1.1+cet")
    for f in ("Provides", "Conflicts", "Replaces"):
        assert "criu" in field(f).split(", ")[0], f
    assert "python3-protobuf" in field("Depends") and "libprotobuf-c1" in field("Depends")
    files = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    for path in ("./usr/sbin/criu", "./usr/bin/crit", "./usr/lib/python3/dist-packages/pycriu/__init__.py",
                 f"./usr/lib/{MULTIARCH}/libcriu.so.2.0", "./usr/share/doc/criu-cet/copyright"):
        assert path in files, path


def dpkg_status(pkg):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else ""


def test_deb_installs_is_used_and_removes(deb):
    """A real install with apt on this machine (root, Debian 12), used, removed."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("needs root and apt-get to install a package")
    for pkg in ("criu", "criu-cet"):
        if "installed" in dpkg_status(pkg):
            pytest.skip(f"{pkg} is installed on this machine: not replacing it")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", deb], env=env,
                       capture_output=True, text=True, timeout=900)
    try:
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        assert dpkg_status("criu-cet") == "install ok installed"
        check_installed_criu("/usr/sbin/criu")
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cet_core_round_trip(clean, "/usr/bin/crit")
    finally:
        subprocess.run(["dpkg", "--purge", "criu-cet"], env=env, capture_output=True, timeout=300)
    assert not dpkg_status("criu-cet").endswith("installed") and not os.path.exists("/usr/sbin/criu")
