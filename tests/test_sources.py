# SPDX-License-Identifier: GPL-2.0
"""Host-only: source pinning, mirror discovery and checksum checks."""

import hashlib
import os

import pytest

import sources

GOOD = "a" * 64


def test_lock_file_pins_the_sources():
    pins = sources.load_pins()
    assert set(pins) == {"criu", "bochs", "linux", "linuxnew", "criu42", "runc", "glibc", "valkey",
                          "podman", "conmon", "libsubid", "libgpgme", "libassuan", "ctrcommon"}
    assert pins["criu"].filename == "criu_4.1.1.orig.tar.xz"
    # the best upstream, for make compare / make bench only
    assert pins["criu42"].spec == "criu=4.2.1-1" and pins["criu42"].suite == "forky"
    assert pins["bochs"].spec == "bochs=3.0+dfsg-1"
    assert pins["linux"].kind == "deb" and pins["linux"].security
    # the newest kernel in the archive, for the kernel series (make kernel-series)
    assert pins["linuxnew"].kind == "deb" and pins["linuxnew"].spec.startswith("linux-source-7.3=")
    # Debian 12's runc, the binary package, for the runc suite
    assert pins["runc"].kind == "deb" and pins["runc"].spec == "runc=1.1.5+ds1-1+deb12u1"
    assert pins["runc"].filename == "runc_1.1.5+ds1-1+deb12u1_amd64.deb"
    # Debian 12's podman and conmon for the podman suite; libgpgme from the
    # security suite, libsubid's file name with its epoch as apt prints it
    assert pins["podman"].spec == "podman=4.3.1+ds1-8+deb12u1+b3" and pins["conmon"].spec == "conmon=2.1.6+ds1-1"
    assert pins["libgpgme"].security and pins["libsubid"].filename.startswith("libsubid4_1%3a")
    # the guest's CET userland: trixie's glibc (built --enable-cet) and valkey
    assert pins["glibc"].spec == "glibc=2.41-12+deb13u5" and pins["glibc"].filename == "glibc_2.41.orig.tar.xz"
    assert pins["valkey"].kind == "orig" and pins["valkey"].spec.startswith("valkey=8.1.1+")


@pytest.mark.parametrize("text, msg", [
    ("x trixie orig x=1 f", "expected 6 fields"),
    (f"x trixie tarball x=1 f {GOOD}", "unknown kind"),
    ("x trixie orig x=1 f deadbeef", "malformed sha256"),
    (f"x trixie orig x=1 f {GOOD}\nx trixie orig x=1 f {GOOD}", "pinned twice"),
])
def test_bad_lock_lines(text, msg):
    with pytest.raises(sources.SourceError, match=msg):
        sources.parse_lock(text)


def test_comments_and_blank_lines():
    pins = sources.parse_lock(f"# c\n\nx trixie orig x=1 f {GOOD}  # trailing\n")
    assert list(pins) == ["x"]


def test_mirror_from_deb822_and_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("CRIU_CET_MIRROR", raising=False)
    monkeypatch.delenv("CRIU_CET_SECURITY_MIRROR", raising=False)
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text("# nothing\n")
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm bookworm-updates\n"
        "Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian-security\n"
        "Suites: bookworm-security\nComponents: main\n")
    main = sources.Pin("c", "trixie", "orig", "c=1", "f", GOOD)
    sec = sources.Pin("l", "bookworm-security", "deb", "l=1", "f", GOOD)
    assert sources.mirror_for(main, str(tmp_path)) == "http://mirror.example/debian"
    assert sources.mirror_for(sec, str(tmp_path)) == "http://mirror.example/debian-security"
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text("deb [arch=amd64] http://m.example/debian bookworm main\n")
    assert sources.mirror_for(main, str(tmp_path)) == "http://m.example/debian"
    with pytest.raises(sources.SourceError, match="no Debian security mirror"):
        sources.mirror_for(sec, str(tmp_path))
    monkeypatch.setenv("CRIU_CET_SECURITY_MIRROR", "http://override/debian-security/")
    assert sources.mirror_for(sec, str(tmp_path)) == "http://override/debian-security"


def test_print_uris_parsing():
    out = ("'http://m/pool/c/criu_4.1.1-1.dsc' criu_4.1.1-1.dsc 2806 SHA256:" + "1" * 64 + "\n"
           "'http://m/pool/c/criu_4.1.1.orig.tar.xz' criu_4.1.1.orig.tar.xz 10 SHA256:" + "2" * 64)
    assert sources.parse_print_uris(out, "criu_4.1.1.orig.tar.xz") == \
        ("http://m/pool/c/criu_4.1.1.orig.tar.xz", "2" * 64)
    with pytest.raises(sources.SourceError, match="does not list"):
        sources.parse_print_uris(out, "other.tar.xz")


def test_checksum_verification(tmp_path):
    f = tmp_path / "blob"
    f.write_bytes(b"criu-cet")
    good = hashlib.sha256(b"criu-cet").hexdigest()
    sources.verify(sources.Pin("b", "trixie", "orig", "b=1", "blob", good), str(f))
    with pytest.raises(sources.SourceError, match="checksum mismatch for blob"):
        sources.verify(sources.Pin("b", "trixie", "orig", "b=1", "blob", GOOD), str(f))


def test_fetch_reuses_a_verified_copy_and_replaces_a_bad_one(tmp_path, monkeypatch):
    data = b"tarball"
    pin = sources.Pin("t", "trixie", "orig", "t=1", "t.tar.xz", hashlib.sha256(data).hexdigest())
    (tmp_path / "t.tar.xz").write_bytes(data)
    monkeypatch.setattr(sources, "locate", lambda *a: pytest.fail("must not ask the archive"))
    assert sources.fetch(pin, str(tmp_path)) == str(tmp_path / "t.tar.xz")
    # a corrupted copy is thrown away and fetched again, and a wrong download is refused
    (tmp_path / "t.tar.xz").write_bytes(b"corrupt")
    monkeypatch.setattr(sources, "locate", lambda *a: "file://" + str(tmp_path / "served"))
    (tmp_path / "served").write_bytes(b"evil")
    with pytest.raises(sources.SourceError, match="checksum mismatch"):
        sources.fetch(pin, str(tmp_path))
    assert not os.path.exists(tmp_path / "t.tar.xz")
    (tmp_path / "served").write_bytes(data)
    assert open(sources.fetch(pin, str(tmp_path)), "rb").read() == data


def test_unreachable_archive_is_a_clear_error(tmp_path, monkeypatch):
    pin = sources.Pin("t", "trixie", "orig", "t=1", "t.tar.xz", GOOD)
    monkeypatch.setattr(sources, "locate", lambda *a: "http://127.0.0.1:9/none")
    with pytest.raises(sources.SourceError, match="t: download of .* failed"):
        sources.fetch(pin, str(tmp_path))
