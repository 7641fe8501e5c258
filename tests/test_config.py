"""Tests of perun_core.config and perun_core.config.templates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from perun_core import config as cfg
from perun_core.config import edits as config_edits
from perun_core.config import (
    DEFAULTS,
    Config,
    ConfigStack,
    parse_cli_value,
    reset,
    shared_config_dir,
    unit_params,
    validate,
    validate_data,
)
from perun_core.errors import ConfigError, PerunError, UnsupportedFormatVersion
from perun_core.config.templates import (
    TEMPLATES,
    find_commands,
    find_workloads,
    render_local_config,
    render_shared_config,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------
# shared_config_dir


def test_shared_config_dir_prefers_perun_config_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PERUN_CONFIG_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert shared_config_dir() == tmp_path / "explicit"


def test_shared_config_dir_uses_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("PERUN_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert shared_config_dir() == tmp_path / "xdg" / "perun"


def test_shared_config_dir_falls_back_to_home(monkeypatch, tmp_path):
    monkeypatch.delenv("PERUN_CONFIG_DIR", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert shared_config_dir() == tmp_path / "home" / ".config" / "perun"


def test_empty_env_values_are_ignored(monkeypatch, tmp_path):
    monkeypatch.setenv("PERUN_CONFIG_DIR", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert shared_config_dir() == tmp_path / ".config" / "perun"


# --------------------------------------------------------------------------
# loading


def test_load_get_has(tmp_path):
    path = write(tmp_path / "local.yml", "vcs:\n  type: git\n  url: ..\ncmds:\n  - ./app\n")
    conf = Config.load(path, kind="local")
    assert conf.path == path
    assert conf.kind == "local"
    assert conf.data == {"vcs": {"type": "git", "url": ".."}, "cmds": ["./app"]}
    assert conf.get("vcs.type") == "git"
    assert conf.get("vcs") == {"type": "git", "url": ".."}
    assert conf.get("cmds") == ["./app"]
    assert conf.has("vcs.url")
    assert not conf.has("vcs.nothing")
    assert not conf.has("cmds.x")
    with pytest.raises(KeyError):
        conf.get("format.status")
    with pytest.raises(KeyError):
        conf.get("vcs.type.deeper")


def test_get_returns_a_copy(tmp_path):
    conf = Config.load(write(tmp_path / "l.yml", "cmds: [a]\n"), kind="local")
    conf.get("cmds").append("b")
    assert conf.get("cmds") == ["a"]


def test_missing_shared_is_empty_and_missing_local_is_an_error(tmp_path):
    shared = Config.load(tmp_path / "nope" / "shared.yml", kind="shared")
    assert shared.data == {}
    assert not shared.has("general.editor")
    with pytest.raises(ConfigError) as info:
        Config.load(tmp_path / "local.yml", kind="local")
    assert str(tmp_path / "local.yml") in str(info.value)
    assert "does not exist" in str(info.value)


def test_empty_and_comment_only_files_are_empty_mappings(tmp_path):
    assert Config.load(write(tmp_path / "a.yml", ""), kind="local").data == {}
    assert Config.load(write(tmp_path / "b.yml", "# nothing\n\n"), kind="local").data == {}


def test_invalid_yaml_names_file_and_line(tmp_path):
    path = write(tmp_path / "local.yml", "vcs:\n  type: git\n  url: [unclosed\nformat: x\n")
    with pytest.raises(ConfigError) as info:
        Config.load(path, kind="local")
    message = str(info.value)
    assert str(path) in message
    assert "line 4" in message
    assert "column" in message
    assert "\n" not in message
    assert info.value.path == path


def test_invalid_yaml_with_bad_indentation(tmp_path):
    path = write(tmp_path / "shared.yml", "general:\n  editor: vi\n paging: never\n")
    with pytest.raises(ConfigError) as info:
        Config.load(path, kind="shared")
    assert "line 3" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_top_level_must_be_a_mapping(tmp_path, text):
    path = write(tmp_path / "local.yml", text)
    with pytest.raises(ConfigError) as info:
        Config.load(path, kind="local")
    assert "mapping" in str(info.value)
    assert str(path) in str(info.value)


def test_directory_instead_of_file(tmp_path):
    (tmp_path / "local.yml").mkdir()
    with pytest.raises(ConfigError):
        Config.load(tmp_path / "local.yml", kind="local")


def test_non_utf8_file(tmp_path):
    path = tmp_path / "local.yml"
    path.write_bytes(b"general:\n  editor: \xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        Config.load(path, kind="local")
    assert "UTF-8" in str(info.value)


def test_config_version(tmp_path):
    assert Config.load(write(tmp_path / "a.yml", "config_version: 1\n"), kind="local").get("config_version") == 1
    with pytest.raises(UnsupportedFormatVersion) as info:
        Config.load(write(tmp_path / "b.yml", "config_version: 2\ngeneral: {editor: vi}\n"), kind="local")
    assert info.value.version == 2
    assert info.value.newest == 1
    assert info.value.path == tmp_path / "b.yml"
    # even without validation a newer file is refused
    with pytest.raises(UnsupportedFormatVersion):
        Config.load(tmp_path / "b.yml", kind="local", validate=False)
    with pytest.raises(ConfigError) as bad:
        Config.load(write(tmp_path / "c.yml", "config_version: one\n"), kind="local")
    assert bad.value.key == "config_version"


def test_load_validates_known_keys(tmp_path):
    path = write(tmp_path / "local.yml", "general:\n  paging: sometimes\n")
    with pytest.raises(ConfigError) as info:
        Config.load(path, kind="local")
    assert info.value.key == "general.paging"
    assert "sometimes" in str(info.value)
    # a broken file can still be opened for repair
    conf = Config.load(path, kind="local", validate=False)
    assert conf.get("general.paging") == "sometimes"


def test_unknown_keys_are_allowed(tmp_path):
    conf = Config.load(write(tmp_path / "l.yml", "whatever:\n  nested: [1, 2]\nvcs:\n  tagit: yes\n"), kind="local")
    assert conf.get("whatever.nested") == [1, 2]
    assert conf.get("vcs.tagit") is True


# --------------------------------------------------------------------------
# set / unset / save


def test_set_and_save_round_trip(tmp_path):
    path = tmp_path / "shared.yml"
    conf = Config.load(path, kind="shared")
    conf.set("general.editor", "nano")
    conf.set("format.status", "| %type% | %cmd% |")
    conf.set("degradation.strategies", [{"method": "bmoe", "type": "mixed"}, {"method": "aat"}])
    conf.set("profiles.register_after_run", True)
    assert not path.exists()  # nothing written before save
    conf.save()
    again = Config.load(path, kind="shared")
    assert again.data == {
        "general": {"editor": "nano"},
        "format": {"status": "| %type% | %cmd% |"},
        "degradation": {"strategies": [{"method": "bmoe", "type": "mixed"}, {"method": "aat"}]},
        "profiles": {"register_after_run": True},
    }
    assert again.get("format.status") == "| %type% | %cmd% |"


def test_set_creates_nested_sections(tmp_path):
    conf = Config.load(write(tmp_path / "l.yml", "vcs:\n  type: git\n"), kind="local")
    conf.set("a.b.c.d", 5)
    conf.set("a.b.e", "x")
    conf.save()
    data = yaml.safe_load((tmp_path / "l.yml").read_text())
    assert data == {"vcs": {"type": "git"}, "a": {"b": {"c": {"d": 5}, "e": "x"}}}


def test_set_fills_an_empty_section(tmp_path):
    path = write(tmp_path / "l.yml", "# header\nformat:\n# trailing\n")
    conf = Config.load(path, kind="local")
    assert conf.data == {"format": None}
    conf.set("format.shortlog", "%checksum:6%")
    conf.save()
    text = path.read_text()
    assert yaml.safe_load(text) == {"format": {"shortlog": "%checksum:6%"}}
    assert "# header" in text and "# trailing" in text


def test_set_through_a_scalar_is_an_error(tmp_path):
    conf = Config.load(write(tmp_path / "l.yml", "plain: 3\n"), kind="local")
    with pytest.raises(ConfigError) as info:
        conf.set("plain.sub", 1)
    assert "plain" in str(info.value)
    assert conf.data == {"plain": 3}


def test_set_below_a_known_option_is_an_error(tmp_path):
    conf = Config.load(tmp_path / "s.yml", kind="shared")
    with pytest.raises(ConfigError) as info:
        conf.set("format.status.color", "red")
    assert info.value.key == "format.status"


def test_set_validates(tmp_path):
    conf = Config.load(tmp_path / "s.yml", kind="shared")
    with pytest.raises(ConfigError) as info:
        conf.set("format.sort_profiles_by", "size")
    assert info.value.key == "format.sort_profiles_by"
    assert "expected one of realpath" in str(info.value)
    assert "'size'" in str(info.value)
    assert conf.data == {}


def test_invalid_keys(tmp_path):
    conf = Config.load(tmp_path / "s.yml", kind="shared")
    for key in ("", "a..b", ".a", "a."):
        with pytest.raises(ConfigError):
            conf.set(key, 1)
        assert not conf.has(key)


def test_unset(tmp_path):
    path = write(tmp_path / "l.yml", "format:\n  status: x\n  shortlog: y\ngeneral:\n  editor: vi\n")
    conf = Config.load(path, kind="local")
    conf.unset("format.status")
    assert conf.data == {"format": {"shortlog": "y"}, "general": {"editor": "vi"}}
    conf.unset("general.editor")  # the emptied section goes too
    assert conf.data == {"format": {"shortlog": "y"}}
    with pytest.raises(KeyError):
        conf.unset("general.editor")
    with pytest.raises(KeyError):
        conf.unset("format.shortlog.deeper")
    conf.save()
    assert yaml.safe_load(path.read_text()) == {"format": {"shortlog": "y"}}


def test_unset_keeps_comments(tmp_path):
    text = "# top\nformat:\n  # status comment\n  status: x\n  shortlog: y  # short\n# bottom\n"
    path = write(tmp_path / "l.yml", text)
    conf = Config.load(path, kind="local")
    conf.unset("format.status")
    conf.save()
    new = path.read_text()
    assert yaml.safe_load(new) == {"format": {"shortlog": "y"}}
    assert "# top" in new and "# short" in new and "# bottom" in new


def test_save_is_atomic_and_creates_directories(tmp_path):
    path = tmp_path / "deep" / "dir" / "shared.yml"
    conf = Config.load(path, kind="shared")
    conf.set("general.paging", "never")
    conf.save()
    assert Config.load(path, kind="shared").get("general.paging") == "never"
    leftovers = [p.name for p in path.parent.iterdir() if p.name != "shared.yml"]
    assert leftovers == []


def test_direct_changes_to_data_are_saved(tmp_path):
    path = write(tmp_path / "l.yml", "# c\ngeneral:\n  editor: vi\n")
    conf = Config.load(path, kind="local")
    conf.data["general"]["editor"] = "emacs"
    conf.save()
    assert Config.load(path, kind="local").get("general.editor") == "emacs"


# --------------------------------------------------------------------------
# comment preservation


COMMENTED = """\
# Perun local configuration -- keep this header
config_version: 1

vcs:
  type: git   # the only one supported
  url: ..

# formats for status and log
format:
  # status line
  status: '| %type% | %cmd% |'   # inline note
  shortlog: '%checksum:6% %desc%'

cmds:
  - ./app     # the main binary
  - ./tool

degradation:
    apply: first
    strategies:
        - method: aat
# end of file
"""


def load_commented(tmp_path):
    return Config.load(write(tmp_path / "local.yml", COMMENTED), kind="local")


def assert_comments_kept(text, *, but=()):
    for comment in (
        "# Perun local configuration -- keep this header",
        "# the only one supported",
        "# formats for status and log",
        "# status line",
        "# inline note",
        "# the main binary",
        "# end of file",
    ):
        if comment not in but:
            assert comment in text, comment


def test_set_existing_scalar_keeps_comments(tmp_path):
    conf = load_commented(tmp_path)
    conf.set("format.status", "| %source% | %collector% |")
    conf.save()
    text = conf.path.read_text()
    assert_comments_kept(text)
    assert "status: '| %source% | %collector% |'   # inline note" in text
    data = yaml.safe_load(text)
    assert data["format"]["status"] == "| %source% | %collector% |"
    assert data["format"]["shortlog"] == "%checksum:6% %desc%"
    # only the one line changed
    before, after = COMMENTED.splitlines(), text.splitlines()
    assert len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [10]


def test_set_new_key_in_existing_section_keeps_comments(tmp_path):
    conf = load_commented(tmp_path)
    conf.set("format.sort_profiles_by", "cmd")
    conf.set("degradation.log_collect", True)
    conf.save()
    text = conf.path.read_text()
    assert_comments_kept(text)
    assert yaml.safe_load(text)["format"] == {
        "status": "| %type% | %cmd% |",
        "shortlog": "%checksum:6% %desc%",
        "sort_profiles_by": "cmd",
    }
    # the new keys follow the indentation of their section
    assert "\n  sort_profiles_by: cmd\n" in text
    assert "\n    log_collect: true\n" in text
    assert yaml.safe_load(text)["degradation"]["log_collect"] is True


def test_set_new_section_keeps_comments(tmp_path):
    conf = load_commented(tmp_path)
    conf.set("general.editor", "nano")
    conf.set("profiles.register_after_run", True)
    conf.save()
    text = conf.path.read_text()
    assert_comments_kept(text)
    data = yaml.safe_load(text)
    assert data["general"] == {"editor": "nano"}
    assert data["profiles"] == {"register_after_run": True}
    assert data["vcs"] == {"type": "git", "url": ".."}


def test_set_list_replaces_block_and_keeps_other_comments(tmp_path):
    conf = load_commented(tmp_path)
    conf.set("cmds", ["./other"])
    conf.set("degradation.strategies", [{"method": "bmoe"}, {"method": "aat"}])
    conf.save()
    text = conf.path.read_text()
    # the comment inside the replaced list goes with it; the others stay
    assert_comments_kept(text, but=("# the main binary",))
    data = yaml.safe_load(text)
    assert data["cmds"] == ["./other"]
    assert data["degradation"] == {"apply": "first", "strategies": [{"method": "bmoe"}, {"method": "aat"}]}


def test_set_scalar_over_flow_list_in_place(tmp_path):
    path = write(tmp_path / "l.yml", "args: [-a, -b]  # flags\nworkloads:  # none yet\n")
    with pytest.raises(ConfigError):  # an empty list option is not a list
        Config.load(path, kind="local")
    conf = Config.load(path, kind="local", validate=False)
    conf.set("args", ["-c"])
    conf.set("workloads", ["in.txt"])
    conf.save()
    text = path.read_text()
    assert "# flags" in text and "# none yet" in text
    assert yaml.safe_load(text) == {"args": ["-c"], "workloads": ["in.txt"]}


def test_falls_back_to_full_dump_when_text_cannot_be_edited(tmp_path):
    # A flow-style top level cannot be edited line by line.
    path = write(tmp_path / "l.yml", "{general: {editor: vi}}  # flow\n")
    conf = Config.load(path, kind="local")
    conf.set("general.paging", "never")
    conf.save()
    assert yaml.safe_load(path.read_text()) == {"general": {"editor": "vi", "paging": "never"}}


def test_edit_is_verified_and_falls_back(tmp_path, monkeypatch):
    # Make the in-place editor produce garbage: the result must still be right.
    monkeypatch.setattr(config_edits, "_edit_set", lambda text, parts, value: text + "general: [broken\n")
    conf = load_commented(tmp_path)
    conf.set("general.editor", "nano")
    conf.save()
    data = yaml.safe_load(conf.path.read_text())
    assert data["general"] == {"editor": "nano"}
    assert data["format"]["status"] == "| %type% | %cmd% |"


def test_edit_producing_other_data_falls_back(tmp_path, monkeypatch):
    monkeypatch.setattr(config_edits, "_edit_set", lambda text, parts, value: text.replace("./tool", "./evil"))
    conf = load_commented(tmp_path)
    conf.set("general.editor", "nano")
    assert yaml.safe_load(conf.text)["cmds"] == ["./app", "./tool"]
    assert yaml.safe_load(conf.text)["general"] == {"editor": "nano"}


def test_duplicate_keys_follow_yaml(tmp_path):
    path = write(tmp_path / "l.yml", "general:\n  editor: vi\ngeneral:\n  editor: ed\n")
    conf = Config.load(path, kind="local")
    assert conf.get("general.editor") == "ed"
    conf.set("general.editor", "nano")
    assert yaml.safe_load(conf.text) == {"general": {"editor": "nano"}}


def test_special_strings_survive_in_place_edit(tmp_path):
    conf = load_commented(tmp_path)
    values = ["a: b", "# not a comment", "x #y", "yes", "3", "", "multi\nline", "'quoted'", "tab\there", "ünï ┃"]
    for value in values:
        conf.set("format.shortlog", value)
        assert yaml.safe_load(conf.text)["format"]["shortlog"] == value
        assert "# inline note" in conf.text


def test_in_place_edit_of_block_scalar(tmp_path):
    path = write(tmp_path / "l.yml", "format:\n  status: |\n    line one\n    line two\n  shortlog: s  # keep\n")
    conf = Config.load(path, kind="local")
    conf.set("format.status", "flat")
    assert yaml.safe_load(conf.text) == {"format": {"status": "flat", "shortlog": "s"}}
    assert "# keep" in conf.text


# --------------------------------------------------------------------------
# the stack


def make_stack(tmp_path, local_text, shared_text):
    local = Config.load(write(tmp_path / ".perun" / "local.yml", local_text), kind="local")
    shared = Config.load(write(tmp_path / "shared.yml", shared_text), kind="shared")
    return ConfigStack(local, shared)


def test_nearest_lookup_order(tmp_path):
    stack = make_stack(
        tmp_path,
        "general:\n  editor: local-editor\n",
        "general:\n  editor: shared-editor\n  paging: never\n",
    )
    assert stack.get("general.editor") == "local-editor"
    assert stack.source_of("general.editor") == "local"
    assert stack.get("general.paging") == "never"
    assert stack.source_of("general.paging") == "shared"
    assert stack.get("format.shortlog") == "%checksum:6% (%stats%) %desc:50% %changes%"
    assert stack.source_of("format.shortlog") == "default"
    with pytest.raises(ConfigError) as info:
        stack.get("nothing.here")
    assert info.value.key == "nothing.here"
    assert "is not set" in str(info.value)
    with pytest.raises(ConfigError):
        stack.source_of("nothing.here")
    assert stack.get_or("nothing.here", 7) == 7
    assert stack.get_or("general.editor", 7) == "local-editor"


def test_stack_without_local(tmp_path):
    shared = Config.load(write(tmp_path / "shared.yml", "format:\n  status: s\n"), kind="shared")
    stack = ConfigStack(None, shared)
    assert stack.get("format.status") == "s"
    assert stack.get("general.editor") == "vi"
    assert stack.source_of("general.editor") == "default"


def test_defaults(tmp_path):
    stack = ConfigStack(None, Config.load(tmp_path / "none.yml", kind="shared"))
    assert stack.get("general.paging") == "only-log"
    assert stack.get("general.editor") == "vi"
    assert stack.get("format.status") == "┃ [%type%] ┃ %cmd% ┃ %args% ┃ %workload% ┃ %collector% ┃ %time% ┃"
    assert stack.get("format.output_profile_template") == "%collector%-%cmd%-%args%-%workload%-%date%"
    assert stack.get("format.sort_profiles_by") == "time"
    assert stack.get("degradation.apply") == "first"
    assert stack.get("degradation.strategies") == [{"method": "size_aware_rank_test"}]
    assert stack.get("profiles.register_after_run") is False
    assert stack.get("execute.pre_run") == []
    # defaults cannot be changed through what get returns
    stack.get("degradation.strategies").append({"method": "x"})
    assert DEFAULTS["degradation"]["strategies"] == [{"method": "size_aware_rank_test"}]
    assert cfg.default("general.paging") == "only-log"
    with pytest.raises(KeyError):
        cfg.default("general.nothing")
    validate_data(DEFAULTS)


def test_gather_order(tmp_path):
    stack = make_stack(
        tmp_path,
        "degradation:\n  strategies:\n    - {type: mixed, method: bmoe}\n",
        "degradation:\n  strategies:\n    - {type: memory, method: lreg}\n    - {method: aat}\n",
    )
    assert stack.gather("degradation.strategies") == [
        {"type": "mixed", "method": "bmoe"},
        {"type": "memory", "method": "lreg"},
        {"method": "aat"},
        {"method": "size_aware_rank_test"},  # the built-in default comes last
    ]
    # the nearest lookup still sees only the local list
    assert stack.get("degradation.strategies") == [{"type": "mixed", "method": "bmoe"}]


def test_gather_with_defaults_only_and_unknown(tmp_path):
    stack = make_stack(tmp_path, "", "")
    assert stack.gather("degradation.strategies") == [{"method": "size_aware_rank_test"}]
    assert stack.gather("no.such.key") == []
    stack2 = make_stack(tmp_path / "2", "extra:\n  x: 1\n", "extra:\n  x: [2, 3]\n")
    assert stack2.gather("extra.x") == [1, 2, 3]


# --------------------------------------------------------------------------
# validation


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("general.paging", "always"),
        ("general.paging", "only-status"),
        ("general.editor", "code --wait"),
        ("format.status", "%type%"),
        ("format.anything_new", "%x%"),
        ("format.sort_profiles_by", "checksum"),
        ("profiles.register_after_run", True),
        ("profiles.register_after_run", 1),
        ("execute.pre_run", ["make", "make install"]),
        ("cmds", ["./a"]),
        ("args", []),
        ("workloads", ["HEAD", "HEAD~1"]),
        ("collectors", [{"name": "time"}, {"name": "memory", "params": {"sampling": 1}}]),
        ("postprocessors", [{"name": "regression_analysis", "params": [{"method": "full"}, {"steps": 10}]}]),
        ("degradation.apply", "all"),
        ("degradation.strategies", [{"method": "aat"}, {"type": "mixed", "method": "bmoe"}]),
        ("degradation.collect_before_check", False),
        ("degradation.log_collect", True),
        ("vcs.type", "git"),
        ("vcs.url", "../repo"),
        ("vcs", {"type": "git", "url": "."}),
        ("format", None),
        ("unknown.key", object()),
        ("config_version", 1),
    ],
)
def test_valid_values(key, value):
    validate(key, value)


@pytest.mark.parametrize(
    ("key", "value", "bad_key", "fragment"),
    [
        ("general.paging", "sometimes", "general.paging", "expected one of always, only-log, only-status, never"),
        ("general.editor", 3, "general.editor", "got int 3"),
        ("general.editor", "", "general.editor", "non-empty"),
        ("format.status", ["x"], "format.status", "expected a string"),
        ("format.sort_profiles_by", "size", "format.sort_profiles_by", "got str 'size'"),
        ("profiles.register_after_run", "maybe", "profiles.register_after_run", "expected a boolean"),
        ("profiles.register_after_run", 2, "profiles.register_after_run", "expected a boolean"),
        ("execute.pre_run", "make", "execute.pre_run", "expected a list of strings"),
        ("execute.pre_run", ["make", 3], "execute.pre_run", "item 2"),
        ("cmds", "./a", "cmds", "expected a list of strings"),
        ("workloads", [100], "workloads", "quote it"),
        ("collectors", [{"params": {}}], "collectors", "'name'"),
        ("collectors", ["time"], "collectors", "got str 'time'"),
        ("postprocessors", [{"name": "x", "params": 3}], "postprocessors", "'params'"),
        ("postprocessors", [{"name": "x", "param": {}}], "postprocessors", "unknown key 'param'"),
        ("degradation.apply", "some", "degradation.apply", "expected one of first, all"),
        ("degradation.strategies", {"method": "aat"}, "degradation.strategies", "expected a list of mappings"),
        ("degradation.strategies", ["aat"], "degradation.strategies", "item 1"),
        ("degradation.log_collect", "yes please", "degradation.log_collect", "expected a boolean"),
        ("vcs.type", "svn", "vcs.type", "expected one of git"),
        ("vcs.url", None, "vcs.url", "got null"),
        ("vcs", "git", "vcs", "expected a section"),
        ("general", {"paging": "x"}, "general.paging", "expected one of"),
        ("degradation", {"strategies": [{"method": 1}]}, "degradation.strategies", "'method'"),
        ("config_version", 2, "config_version", "at most 1"),
        ("format.status.sub", "x", "format.status", "expected a string"),
    ],
)
def test_invalid_values_name_the_key(key, value, bad_key, fragment):
    with pytest.raises(ConfigError) as info:
        validate(key, value, path="/some/local.yml")
    assert info.value.key == bad_key
    assert fragment in str(info.value)
    assert f"'{bad_key}'" in str(info.value)
    assert "/some/local.yml" in str(info.value)
    assert "\n" not in str(info.value)
    assert "expected" in info.value.reason or "unknown key" in info.value.reason


def test_unit_params():
    assert unit_params({"name": "time"}) == {}
    assert unit_params({"name": "x", "params": {"a": 1}}) == {"a": 1}
    assert unit_params({"name": "x", "params": [{"method": "full"}, {"steps": 10}]}) == {"method": "full", "steps": 10}


# --------------------------------------------------------------------------
# parse_cli_value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("true", True),
        ("false", False),
        ("3", 3),
        ("-3", -3),
        ("2.5", 2.5),
        ("[a, b]", ["a", "b"]),
        ("[]", []),
        ("{name: time}", {"name": "time"}),
        ("[{method: aat}]", [{"method": "aat"}]),
        ("null", None),
        ("~", None),
        ("vim", "vim"),
        ("code --wait", "code --wait"),
        ("'3'", "3"),
        ('"true"', "true"),
        ("| %source% | %collector% |", "| %source% | %collector% |"),
        ("|", "|"),
        (">", ">"),
        ("a: b", "a: b"),
        ("key: value: other", "key: value: other"),
        ("%collector%-%cmd%", "%collector%-%cmd%"),
        ("%checksum:6% (%stats%) %desc%", "%checksum:6% (%stats%) %desc%"),
        ("┃ [%type%] ┃ %cmd% ┃", "┃ [%type%] ┃ %cmd% ┃"),
        ("# not a comment", "# not a comment"),
        ("x # y", "x # y"),
        ("a   b", "a   b"),
        ("- make", "- make"),
        ("-O2", "-O2"),
        ("*alias", "*alias"),
        ("&anchor", "&anchor"),
        ("!tag", "!tag"),
        ("[unclosed", "[unclosed"),
        ("2024-01-02", "2024-01-02"),
        ("---", "---"),
        ("", ""),
        ("only-log", "only-log"),
    ],
)
def test_parse_cli_value(text, expected):
    value = parse_cli_value(text)
    assert value == expected
    assert type(value) is type(expected)


def test_parse_cli_value_feeds_set(tmp_path):
    conf = Config.load(tmp_path / "shared.yml", kind="shared")
    conf.set("format.shortlog", parse_cli_value("| %source% | %collector% |"))
    conf.set("profiles.register_after_run", parse_cli_value("true"))
    conf.set("cmds", parse_cli_value("[./a, ./b]"))
    conf.save()
    assert Config.load(conf.path, kind="shared").data == {
        "format": {"shortlog": "| %source% | %collector% |"},
        "profiles": {"register_after_run": True},
        "cmds": ["./a", "./b"],
    }


# --------------------------------------------------------------------------
# templates


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    (root / "build" / "app").write_text("#!/bin/sh\n")
    (root / "build" / "app").chmod(0o755)
    (root / "build" / "tool").write_text("#!/bin/sh\n")
    (root / "build" / "tool").chmod(0o700)
    (root / "build" / "notes.txt").write_text("not executable\n")
    (root / "build" / "CMakeFiles").mkdir()
    (root / "build" / "CMakeFiles").chmod(0o755)
    (root / "build" / "CMakeFiles" / "deep-exe").write_text("")
    (root / "build" / "CMakeFiles" / "deep-exe").chmod(0o755)
    (root / "dist").mkdir()
    (root / "dist" / "cli").write_text("")
    (root / "dist" / "cli").chmod(0o755)
    (root / "src").mkdir()
    (root / "src" / "hidden-exe").write_text("")
    (root / "src" / "hidden-exe").chmod(0o755)
    (root / "workloads" / "big").mkdir(parents=True)
    (root / "workloads" / "small.txt").write_text("1\n")
    (root / "workloads" / "big" / "huge.bin").write_text("2\n")
    (root / "workloads" / ".gitkeep").write_text("")
    (root / "examples").mkdir()
    (root / "examples" / "hello world: x.txt").write_text("3\n")
    (root / "data").mkdir()
    (root / "data" / "ignored.txt").write_text("")
    return root


def test_find_commands(project):
    assert find_commands(project) == ["./build/app", "./build/tool", "./dist/cli"]


def test_find_workloads(project):
    assert find_workloads(project) == [
        "./examples/hello world: x.txt",
        "./workloads/big/huge.bin",
        "./workloads/small.txt",
    ]


def test_lookup_in_empty_project(tmp_path):
    assert find_commands(tmp_path) == []
    assert find_workloads(tmp_path) == []


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_parses_and_validates(template, project):
    for root in (project, project.parent / "empty"):
        text = render_local_config(template, project_root=root)
        data = yaml.safe_load(text)
        assert isinstance(data, dict)
        validate_data(data)
        assert data["config_version"] == 1
        assert data["vcs"] == {"type": "git", "url": "."}
        assert text.lstrip().startswith("#")
        conf = Config.from_text(root / ".perun" / "local.yml", text, kind="local")
        assert conf.get("vcs.type") == "git"


def test_master_template_is_mostly_empty(project):
    text = render_local_config("master", project_root=project, vcs_type="git", vcs_url="../repo")
    data = yaml.safe_load(text)
    assert data == {"config_version": 1, "vcs": {"type": "git", "url": "../repo"}}
    for hint in ("# cmds:", "# args:", "# workloads:", "# collectors:", "# postprocessors:", "#   pre_run:",
                 "#   register_after_run:", "#   strategies:", "#   status:"):
        assert hint in text


def test_developer_template(project):
    (project / "Makefile").write_text("all:\n")
    data = yaml.safe_load(render_local_config("developer", project_root=project))
    # collect_before_check runs commands, so a local.yml (which may come with a clone) does not set it
    assert data["degradation"] == {
        "log_collect": True,
        "strategies": [{"method": "aat"}],
    }
    assert data["execute"] == {"pre_run": ["make"]}
    for absent in ("cmds", "workloads", "collectors", "profiles", "format"):
        assert absent not in data


def test_user_template(project):
    (project / "Makefile").write_text("all:\n")
    data = yaml.safe_load(render_local_config("user", project_root=project))
    assert data["cmds"] == ["./build/app", "./build/tool", "./dist/cli"]
    assert data["workloads"] == ["./examples/hello world: x.txt", "./workloads/big/huge.bin", "./workloads/small.txt"]
    assert data["collectors"] == [{"name": "time"}]
    assert data["degradation"]["strategies"] == [{"method": "aat"}]
    assert "collect_before_check" not in data["degradation"]  # honoured only from the shared configuration
    assert data["degradation"]["log_collect"] is True
    assert data["execute"]["pre_run"] == ["make"]
    assert data["profiles"]["register_after_run"] is True
    assert data["format"]["output_profile_template"] == "%collector%-of-%cmd%-%workload%-%date%"
    assert "args" not in data and "postprocessors" not in data


def test_user_template_without_makefile_or_findings(tmp_path):
    text = render_local_config("user", project_root=tmp_path)
    data = yaml.safe_load(text)
    assert "execute" not in data
    assert "No Makefile" in text
    assert "#     - make" in text
    assert "cmds" not in data and "workloads" not in data
    assert "No executables were found" in text
    assert data["collectors"] == [{"name": "time"}]


def test_template_quotes_odd_vcs_values(tmp_path):
    data = yaml.safe_load(render_local_config("master", project_root=tmp_path, vcs_url="a: #b"))
    assert data["vcs"]["url"] == "a: #b"


def test_unknown_template(tmp_path):
    with pytest.raises(ConfigError) as info:
        render_local_config("expert", project_root=tmp_path)
    assert info.value.key == "template"
    assert "expected one of master, developer, user" in str(info.value)


def test_set_in_rendered_template_keeps_hints(project):
    path = write(project / ".perun" / "local.yml", render_local_config("user", project_root=project))
    conf = Config.load(path, kind="local")
    conf.set("format.output_profile_template", "%cmd%-%date%")
    conf.set("args", ["-q"])
    conf.unset("profiles.register_after_run")
    conf.save()
    text = path.read_text()
    assert "# Perun local configuration (user template)." in text
    assert "#   - name: regression_analysis" in text
    data = Config.load(path, kind="local").data
    assert data["format"]["output_profile_template"] == "%cmd%-%date%"
    assert data["args"] == ["-q"]
    assert "profiles" not in data


def test_shared_template():
    data = yaml.safe_load(render_shared_config())
    validate_data(data)
    assert data["general"] == DEFAULTS["general"]
    assert data["format"] == DEFAULTS["format"]
    assert data["degradation"] == DEFAULTS["degradation"]


# --------------------------------------------------------------------------
# reset


def test_reset_local_keeps_vcs(project):
    path = write(
        project / ".perun" / "local.yml",
        "vcs:\n  type: git\n  url: ../elsewhere\n  extra: kept\ncmds: [./old]\ngeneral:\n  editor: ed\n",
    )
    conf = Config.load(path, kind="local")
    reset(conf, "developer")
    data = Config.load(path, kind="local").data
    assert data["vcs"] == {"type": "git", "url": "../elsewhere", "extra": "kept"}
    assert "cmds" not in data and "general" not in data
    assert data["degradation"]["strategies"] == [{"method": "aat"}]
    assert conf.data == data
    assert "# Perun local configuration (developer template)." in path.read_text()


def test_reset_local_user_template_finds_project_files(project):
    path = write(project / ".perun" / "local.yml", "vcs:\n  type: git\n  url: .\n")
    reset(Config.load(path, kind="local"), "user")
    assert Config.load(path, kind="local").get("cmds") == ["./build/app", "./build/tool", "./dist/cli"]


def test_reset_shared(tmp_path):
    path = write(tmp_path / "shared.yml", "general:\n  editor: ed\nmine: 1\n")
    conf = Config.load(path, kind="shared")
    reset(conf)
    data = Config.load(path, kind="shared").data
    assert data["general"] == {"paging": "only-log", "editor": "vi"}
    assert "mine" not in data
    assert data["format"]["status"] == DEFAULTS["format"]["status"]


def test_reset_with_unknown_template_changes_nothing(tmp_path):
    path = write(tmp_path / ".perun" / "local.yml", "vcs:\n  type: git\n  url: .\n")
    with pytest.raises(ConfigError):
        reset(Config.load(path, kind="local"), "nope")
    assert path.read_text() == "vcs:\n  type: git\n  url: .\n"


# --------------------------------------------------------------------------
# module hygiene


def test_errors_are_perun_errors(tmp_path):
    with pytest.raises(PerunError):
        Config.load(tmp_path / "missing.yml", kind="local")


def test_import_does_not_load_yaml():
    code = "import sys; import perun_core.config, perun_core.config.templates; print('yaml' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_crlf_and_unusual_line_breaks(tmp_path):
    path = tmp_path / "l.yml"
    path.write_bytes(b"# windows\r\ngeneral:\r\n  editor: vi\r\n")
    conf = Config.load(path, kind="local")
    conf.set("general.editor", "notepad")
    conf.set("general.paging", "never")
    assert "# windows" in conf.text
    assert yaml.safe_load(conf.text) == {"general": {"editor": "notepad", "paging": "never"}}
    # a line separator YAML counts as a line break: no in-place edit, still right
    odd = Config.from_text(tmp_path / "o.yml", "# a\u2028# b\nformat:\n  status: s\n", kind="local")
    odd.set("format.status", "t")
    assert yaml.safe_load(odd.text) == {"format": {"status": "t"}}


def test_config_set_refuses_an_unknown_key_naming_the_closest(tmp_path):
    import subprocess
    import sys

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    run = lambda *a: subprocess.run([sys.executable, "-m", "perun_core.cli.entry", *a], cwd=tmp_path,  # noqa: E731
                                    capture_output=True, text=True)
    assert run("init").returncode == 0
    before = (tmp_path / ".perun" / "local.yml").read_text()
    typo = run("config", "set", "cmdz", "[./app]")
    assert typo.returncode == 1 and typo.stderr.count("\n") == 1
    assert "key 'cmdz': unknown key; did you mean 'cmds'?" in typo.stderr
    unknown = run("config", "set", "foo.bar", "1")
    assert unknown.returncode == 1 and "unknown key" in unknown.stderr
    assert (tmp_path / ".perun" / "local.yml").read_text() == before
    # keys the original tool writes are known
    assert run("config", "set", "profiles.overwrite", "true").returncode == 0
