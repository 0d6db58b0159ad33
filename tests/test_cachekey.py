# SPDX-License-Identifier: GPL-2.0
"""Host-only: cache keys change with every input and only with inputs."""

import pytest

import cachekey


def test_key_depends_on_content_strings_and_names(tmp_path):
    a, b = tmp_path / "a.patch", tmp_path / "b.patch"
    a.write_text("one")
    b.write_text("two")
    k = cachekey.cache_key([a, b], ["sha"], top=str(tmp_path))
    assert k == cachekey.cache_key([b, a], ["sha"], top=str(tmp_path)), "order must not matter"
    assert len(k) == 16
    assert k != cachekey.cache_key([a, b], ["sha2"], top=str(tmp_path))
    a.write_text("one!")
    assert k != cachekey.cache_key([a, b], ["sha"], top=str(tmp_path))
    a.write_text("one")
    c = tmp_path / "c.patch"
    c.write_text("one")
    assert k != cachekey.cache_key([c, b], ["sha"], top=str(tmp_path)), "renames count"
    assert k != cachekey.cache_key([a], ["sha"], top=str(tmp_path)), "a dropped input counts"


def test_missing_input_is_an_error(tmp_path):
    with pytest.raises(OSError):
        cachekey.cache_key([tmp_path / "nope"], [], top=str(tmp_path))


def test_real_inputs_hash(tmp_path):
    assert cachekey.cache_key(["lab/bochs/xrstors-compacted-offset.patch"], ["x"])
