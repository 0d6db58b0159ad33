# SPDX-License-Identifier: GPL-2.0
"""criu-cet installed (`make install`, PREFIX and DESTDIR) and packaged
(`make deb`), on this host (no lab): every part lands where Debian looks
for it and what was installed works: criu names criu-cet and gives its
shadow-stack verdict, pycriu and crit read criu-cet's CET entry, a program
built with libcriu's pkg-config file talks to the installed criu.  The
package carries the same files, takes criu's place, and really installs:
with apt on this system, used, then purged."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import TOP, assert_shadow_stack_verdict

BUILD = os.environ.get("BUILD", os.path.join(TOP, "build"))
MULTIARCH = "x86_64-linux-gnu"
LIBDIR = f"usr/lib/{MULTIARCH}"
PYDIR = "usr/lib/python3/dist-packages"
# the package is built for criu-cet's CRIU release and stands for these
BASE_VERSION = "4.2.1"
REPLACED = ["criu", "python3-pycriu", "libcriu2", "libcriu-dev", "libcompel1", "libcompel-dev"]
# one thread's CET state as criu-cet dumps it (images/cet.proto)
CET = {"version": 2, "features": "0x1", "locked": "0xffffffffffffffff",
       "ssp": "0x7ffff7ff8ff8", "own_start": "0x7ffff7e00000", "own_end": "0x7ffff7e10000"}
# make, apt and dpkg wait this long for each other (the dpkg lock)
APT = ["apt-get", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=300"]


def run(*args, env=None, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=900, env=env, cwd=cwd)


def make(*args):
    if not os.path.exists(os.path.join(BUILD, "criu-cet", "criu")):
        pytest.skip("criu-cet is not built (make criu-cet)")
    p = run("make", "-s", "-C", TOP, *args)
    assert p.returncode == 0, f"make {' '.join(args)}:\n{p.stdout[-2000:]}{p.stderr[-2000:]}"
    return p.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`make install` into a fresh DESTDIR with Debian's PREFIX."""
    root = str(tmp_path_factory.mktemp("destdir"))
    make("install", f"DESTDIR={root}", "PREFIX=/usr")
    return root


@pytest.fixture(scope="module")
def deb():
    out = make("deb")
    m = re.search(r"(criu-cet_\S+_amd64\.deb)", out)
    assert m, f"make deb named no package:\n{out}"
    return os.path.join(BUILD, "deb", m.group(1))


def files_under(root):
    """Every file and symlink below root, as paths relative to it."""
    found = set()
    for d, _, names in os.walk(root):
        for n in names:
            found.add(os.path.relpath(os.path.join(d, n), root))
    return found


def write_cet_core(path, pydir=None):
    """A core image with a CET entry, written by pycriu (the one in pydir,
    else the system's); returns the pycriu it was."""
    code = ("import sys\n"
            f"sys.path[:0] = {[pydir] if pydir else []!r}\n"
            "import pycriu\n"
            f"img = {{'magic': 'CORE', 'entries': [{{'mtype': 'X86_64', 'cet': {CET!r}}}]}}\n"
            f"open({path!r}, 'wb').write(pycriu.images.dumps(img))\n"
            "print(pycriu.__file__)\n")
    # -I: no PYTHONPATH, user site or working directory: only what was
    # installed; -B: and no byte code left in it
    p = run("/usr/bin/python3", "-I", "-B", "-c", code, cwd="/")
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def assert_crit_reads_cet(crit, path, env=None):
    """crit decodes the CET entry field by field (hex where cet.proto says
    so) and encodes it back to the same bytes."""
    env = dict(env or os.environ, PYTHONDONTWRITEBYTECODE="1")
    p = run(crit, "decode", "--pretty", "-i", path, env=env)
    assert p.returncode == 0, p.stderr
    assert '"cet": {' in p.stdout and f'"ssp": "{CET["ssp"]}"' in p.stdout
    assert f'"own_end": "{CET["own_end"]}"' in p.stdout
    again = path + ".again"
    q = subprocess.run([crit, "encode", "-o", again], input=p.stdout, capture_output=True,
                       text=True, env=env)
    assert q.returncode == 0, q.stderr
    with open(path, "rb") as a, open(again, "rb") as b:
        assert a.read() == b.read()


def libcriu_version(tmp, root="/"):
    """tests/libcriu-version.c built with the pkg-config file installed in
    root and run against the libcriu and criu installed there."""
    env = dict(os.environ, PKG_CONFIG_LIBDIR=os.path.join(root, LIBDIR, "pkgconfig"))
    if root != "/":
        env["PKG_CONFIG_SYSROOT_DIR"] = root
    assert run("pkg-config", "--modversion", "criu", env=env).stdout == f"{BASE_VERSION}\n"
    flags = run("pkg-config", "--cflags", "--libs", "criu", env=env).stdout.split()
    assert flags, "pkg-config does not know criu"
    prog = os.path.join(tmp, "libcriu-version")
    p = run("gcc", "-Wall", "-Werror", "-o", prog, os.path.join(TOP, "tests", "libcriu-version.c"),
            *flags)
    assert p.returncode == 0, p.stderr
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, LIBDIR))
    assert f"libcriu.so.2 => {os.path.join(root, LIBDIR)}/libcriu.so.2" in run("ldd", prog, env=env).stdout
    p = run(prog, os.path.join(root, "usr/sbin/criu"), env=env)
    assert p.returncode == 0, p.stderr
    return int(p.stdout)


def assert_criu_is_criu_cet(criu):
    p = run(criu, "--version")
    assert p.returncode == 0 and p.stdout.splitlines()[0] == f"Version: {BASE_VERSION}"
    assert p.stdout.splitlines()[1].startswith("Flavour: criu-cet")
    assert_shadow_stack_verdict(run(criu, "check", "--feature", "shadow_stack"))


def test_make_install_puts_every_part_in_place(installed):
    files = files_under(installed)
    for f in ["usr/sbin/criu", "usr/sbin/criu-ns", "usr/bin/crit", "usr/bin/compel",
              f"{LIBDIR}/libcriu.so.2", f"{LIBDIR}/libcriu.so", f"{LIBDIR}/libcriu.a",
              f"{LIBDIR}/libcompel.so.1", f"{LIBDIR}/pkgconfig/criu.pc", "usr/include/criu/criu.h",
              f"{PYDIR}/pycriu/images/cet_pb2.py", f"{PYDIR}/crit/__main__.py",
              f"{PYDIR}/pycriu-{BASE_VERSION}.egg-info", f"{PYDIR}/crit-{BASE_VERSION}.egg-info"]:
        assert f in files, f"make install left out {f}"
    assert os.path.realpath(os.path.join(installed, LIBDIR, "libcriu.so")) == \
        os.path.join(installed, LIBDIR, "libcriu.so.2.0")
    # DESTDIR is only where the files go: nothing installed names it
    with open(os.path.join(installed, LIBDIR, "pkgconfig", "criu.pc")) as f:
        assert f"libdir=/{LIBDIR}\n" in f.read()
    assert not [f for f in files if "__pycache__" in f or f.endswith("Makefile")]


def test_installed_criu_is_criu_cet(installed):
    assert_criu_is_criu_cet(os.path.join(installed, "usr/sbin/criu"))


def test_installed_pycriu_and_crit_read_the_cet_entry(installed, tmp_path):
    pydir = os.path.join(installed, PYDIR)
    img = str(tmp_path / "core-1.img")
    assert write_cet_core(img, pydir) == os.path.join(pydir, "pycriu", "__init__.py")
    assert_crit_reads_cet(os.path.join(installed, "usr/bin/crit"), img,
                          env=dict(os.environ, PYTHONPATH=pydir))


def test_installed_libcriu_talks_to_the_installed_criu(installed, tmp_path):
    assert libcriu_version(str(tmp_path), installed) == 40201   # criu_get_version(): 4.2.1


def test_make_install_default_prefix(tmp_path):
    """Without PREFIX: /usr/local, the Python packages where Debian's
    python3 looks under it."""
    make("install", f"DESTDIR={tmp_path}")
    ver = run("/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])").stdout.strip()
    assert os.path.exists(tmp_path / "usr/local/sbin/criu")
    assert os.path.exists(tmp_path / f"usr/local/lib/python{ver}/dist-packages/pycriu/__init__.py")


def test_deb_fields(deb):
    info = run("dpkg-deb", "-f", deb).stdout
    fields = dict(line.split(": ", 1) for line in info.splitlines() if not line.startswith(" "))
    assert fields["Package"] == "criu-cet"
    assert fields["Version"].startswith(f"{BASE_VERSION}+cet")
    assert os.path.basename(deb) == f"criu-cet_{fields['Version']}_amd64.deb"
    assert fields["Architecture"] == "amd64"
    assert "shadow stack" in fields["Description"]
    provides = [p.strip() for p in fields["Provides"].split(",")]
    for name in REPLACED:
        assert f"{name} (= {BASE_VERSION})" in provides
        assert name in [p.strip() for p in fields["Conflicts"].split(",")]
        assert name in [p.strip() for p in fields["Replaces"].split(",")]
    depends = [d.strip().split(" ")[0] for d in fields["Depends"].split(",")]
    # what criu links (from dpkg-shlibdeps) and what pycriu imports
    for name in ["libc6", "libprotobuf-c1", "libnl-3-200", "libnet1", "python3:any", "python3-protobuf"]:
        assert name in depends


def test_deb_holds_what_make_install_does(deb, installed):
    listing = run("dpkg-deb", "-c", deb).stdout.splitlines()
    assert all(" root/root " in line for line in listing)
    # "./usr/lib/x/libcriu.so -> libcriu.so.2.0": the path is the sixth column
    packaged = {line.split()[5][2:] for line in listing if not line.endswith("/")}
    assert packaged == files_under(installed) | {"usr/share/doc/criu-cet/copyright"}
    with open(os.path.join(BUILD, "deb", "stage", "usr/share/doc/criu-cet/copyright")) as f:
        assert "GPL-2" in f.read()


def installed_packages(names):
    return [n for n in names if "install ok installed" in
            run("dpkg-query", "-W", "-f=${Status}", n).stdout]


def test_deb_installs_in_place_of_criu(deb, tmp_path):
    """apt installs the package on this system (the dependencies come from
    Debian), the installed criu-cet is used from where Debian's criu would
    be, and the package is purged again.  A system that has a criu of its
    own (a package or a hand install) is left alone."""
    if os.geteuid() != 0:
        pytest.skip("installing a package needs root")
    if not shutil.which("apt-get"):
        pytest.skip("no apt-get: not a Debian system")
    present = installed_packages(REPLACED + ["criu-cet"])
    if present:
        pytest.skip(f"already installed, left alone: {', '.join(present)}")
    for f in ["/usr/sbin/criu", "/usr/bin/crit", f"/{PYDIR}/pycriu"]:
        if os.path.exists(f):
            pytest.skip(f"{f} exists outside any package, left alone")
    try:
        p = run(*APT, "install", deb, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        assert installed_packages(["criu-cet"]) == ["criu-cet"]
        assert "/usr/sbin/criu\n" in run("dpkg", "-L", "criu-cet").stdout
        assert shutil.which("criu", path="/usr/sbin:/usr/bin") == "/usr/sbin/criu"
        assert_criu_is_criu_cet("/usr/sbin/criu")
        # the ldconfig trigger ran: the dynamic linker knows libcriu
        assert re.search(r"\tlibcriu\.so\.2 \(libc6,x86-64\) => \S+/libcriu\.so\.2\n",
                         run("ldconfig", "-p").stdout)
        img = str(tmp_path / "core-1.img")
        assert write_cet_core(img) == f"/{PYDIR}/pycriu/__init__.py"
        assert_crit_reads_cet("/usr/bin/crit", img)
        assert libcriu_version(str(tmp_path)) == 40201
    finally:
        p = run(*APT, "purge", "criu-cet")
    assert p.returncode == 0, p.stderr
    assert not installed_packages(["criu-cet"]) and not os.path.exists("/usr/sbin/criu")
    # nothing left behind, byte code of the Python packages included
    assert not os.path.exists(f"/{PYDIR}/pycriu") and not os.path.exists(f"/{PYDIR}/crit")
