"""perun_core.profile.columnar_parse: long base64 members taken out as they lie, or the ordinary parse."""

from __future__ import annotations

import base64
import json

import pytest

from perun_core.errors import InvalidProfile
from perun_core.profile import Profile
from perun_core.profile.codec import decode_content, encode_columnar, load_profile_from_file, store_profile_at
from perun_core.profile.columnar_parse import MEMBERS, MOST_PASSED, SMALLEST_TAKEN, parse_columnar
from perun_core.profile.packing import DecodedText
from perun_core.storage.objects import ObjectStore

ROWS = 4000  # one-byte codes of 4000 rows are 5336 base64 characters: every packed column is long enough


def big_profile(meta: dict | None = None) -> Profile:
    resources = [{"amount": i / 7, "uid": f"f{i % 5}", "type": "mixed", "structure-unit-size": 3 * i}
                 for i in range(ROWS)]
    return Profile.from_dict({"header": {"type": "mixed"}, "collector_info": {}, "postprocessors": [],
                              "snapshots": [], "global": {"timestamp": 1.0, **(meta or {}), "resources": resources,
                                                          "models": []}})


def ordinary(encoded: bytes) -> Profile:
    return Profile.from_dict(json.loads(encoded))


def test_long_members_are_taken_out_decoded_and_written_back_as_they_were(tmp_path):
    profile = big_profile()
    encoded = encode_columnar(profile)
    plain = json.loads(encoded)
    doc = parse_columnar(encoded)
    assert doc is not None
    taken = 0
    for column, plain_column in zip(doc["global"]["cols"], plain["global"]["cols"]):
        for member in MEMBERS & column.keys():
            text = plain_column[member]
            assert len(text) >= SMALLEST_TAKEN and type(column[member]) is DecodedText
            assert column[member].text == text.encode() and column[member].data == base64.b64decode(text)
            taken += 1
    assert taken == 4  # amount, uid, type (all zeros: told by counting) and structure-unit-size
    decoded = decode_content(encoded)
    assert decoded == profile == ordinary(encoded)
    assert encode_columnar(decoded) == encoded  # the taken texts go out as they came in
    # the same through the object store (content behind a header) and a compact file
    store = ObjectStore(tmp_path / "objects")
    assert store.read_profile(store.write_profile(profile)) == profile
    store_profile_at(profile, tmp_path / "p.perf", layout="compact")
    assert load_profile_from_file(tmp_path / "p.perf") == profile


def respelled(encoded: bytes, edit) -> bytes:
    """``encoded`` with the long base64 text of the amount column (the first) changed by ``edit``."""
    start = encoded.index(b'"b":"') + 5
    end = encoded.index(b'"', start)
    return encoded[:start] + edit(encoded[start:end]) + encoded[end:]


@pytest.mark.parametrize("edit", [
    lambda text: text[:100] + b"\\n" + text[100:],  # a JSON escape: base64 with a line break, read leniently
    lambda text: text[:100] + b"\\u0041" + text[101:],  # an escaped letter: the same text once parsed
    lambda text: text[:-4] + b"A===",  # padding strict decoding refuses
], ids=["escaped line break", "escaped letter", "bad padding"])
def test_what_strict_base64_refuses_is_parsed_the_ordinary_way(edit):
    encoded = respelled(encode_columnar(big_profile()), edit)
    assert parse_columnar(encoded) is None
    try:
        expected = ordinary(encoded)
    except (InvalidProfile, ValueError):
        with pytest.raises(InvalidProfile):
            decode_content(encoded)
    else:
        assert decode_content(encoded) == expected


@pytest.mark.parametrize("edit", [lambda text: text[:100] + b"\x01" + text[100:],
                                  lambda text: text[:100] + "\u00e9".encode() + text[101:]],
                         ids=["control character", "beyond ASCII"])
def test_text_json_refuses_or_reads_differently_is_never_taken(edit):
    encoded = respelled(encode_columnar(big_profile()), edit)
    assert parse_columnar(encoded) is None
    with pytest.raises(InvalidProfile):
        decode_content(encoded, path="p.perf")


def test_a_member_name_outside_the_columns_is_left_to_the_parser():
    text = base64.b64encode(bytes(range(256)) * 20).decode()
    profile = big_profile({"b": text, "note": {"c": text}})
    encoded = encode_columnar(profile)
    assert parse_columnar(encoded) is None  # the cut in the region's meta is not a column's member
    decoded = decode_content(encoded)
    assert decoded == profile and decoded.global_region.meta["b"] == text


def test_short_or_foreign_documents_are_not_taken_apart():
    small = encode_columnar(Profile.from_dict({"header": {"type": "time"}, "snapshots": [
        {"resources": [{"amount": 1.5, "uid": "f"}]}]}))
    assert parse_columnar(small) is None  # nothing long enough to take out
    assert parse_columnar(b' ' + encode_columnar(big_profile())) is None  # not as perun writes the layout
    assert parse_columnar(json.dumps({"b": "A" * 9000}).encode()) is None


def test_a_document_of_many_other_string_members_is_left_to_the_parser_early():
    """A frame table of many ``"function":"..."`` entries is not walked member by member: past MOST_PASSED of
    them the whole text goes to the parser (the answer is the same, only the way to it differs)."""
    frames = [{"function": f"f{i}", "source": "a.c"} for i in range(MOST_PASSED)]
    few = big_profile({"frames": frames[:10]})
    many = big_profile({"frames": frames})
    assert parse_columnar(encode_columnar(few)) is not None  # a few strings before the columns: taken apart
    assert parse_columnar(encode_columnar(many)) is None
    assert decode_content(encode_columnar(many)) == many
