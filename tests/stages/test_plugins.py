"""Stages from outside gristmill (stages/plugins.py), as the registry hands them out: by import
path and by entry point, and every way a class can fail to be a stage, refused in one line."""

from __future__ import annotations

import pytest

from gristmill.stages.plugins import PluginError, UnknownStage
from gristmill.stages.registry import STAGES, available, get_stage
from tests.stages.plugin_package import dist_info, forget


def test_a_stage_by_its_import_path(lab):
    cls = get_stage("gm_lab.filters:Short")
    assert (cls.__module__, cls.__qualname__, cls.name) == ("gm_lab.filters", "Short", "gm_short")
    assert cls.Params().min_chars == 20
    assert get_stage("gm_lab.filters:Short") is cls
    assert "gm_short" not in STAGES and "gm_short" not in available()  # a path registers nothing


def test_a_built_in_stage_by_its_import_path_is_itself():
    assert get_stage("gristmill.stages.langid:LangId") is get_stage("langid")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "gm_nope.filters:Short",
            "no module named 'gm_nope'; install its package, or put the folder that holds it "
            "on PYTHONPATH",
        ),
        (
            "gm_lab.nope:Short",
            "no module named 'gm_lab.nope'; install its package, or put the folder",
        ),
        (
            "gm_lab.broken:Thing",
            "importing gm_lab.broken failed: No module named 'gm_missing_dependency'",
        ),
        (
            "gm_lab.filters:Shrot",
            "gm_lab.filters has no attribute 'Shrot'; its stages: BadParams, Langid, Nameless, "
            "Short",
        ),
        (
            "gm_lab.filters:helper",
            "helper is not a stage (a subclass of gristmill.stages.base.Stage or GlobalStage)",
        ),
        ("gm_lab.filters:Nameless", "the class needs a `name`, letters, digits and _ (e.g. `name"),
        ("gm_lab.filters:Langid", "its name 'langid' is a built-in stage's; give it another"),
        ("gm_lab.filters:BadParams", "its `Params` must be a subclass of StageParams"),
        ("gm_lab.filters:", "an import path is `package.module:Class`"),
    ],
)
def test_what_is_no_stage_is_refused_in_one_line(lab, path, message):
    with pytest.raises(PluginError) as e:
        get_stage(path)
    assert str(e.value).startswith(f"stage {path!r}: {message}")
    assert "\n" not in str(e.value)
    assert isinstance(e.value, UnknownStage)  # what every caller of get_stage catches


def test_an_installed_package_registers_a_name(lab):
    dist_info(lab, {"gm_short": "gm_lab.filters:Short"})
    forget()
    assert available() == [*STAGES, "gm_short"]
    cls = get_stage("gm_short")
    assert cls is get_stage("gm_lab.filters:Short")
    with pytest.raises(UnknownStage) as e:
        get_stage("gm_shrot")
    assert f"valid stages: {', '.join(STAGES)}, gm_short; or a stage class" in str(e.value)


@pytest.mark.parametrize(
    ("entry_points", "name", "message"),
    [
        (
            {"langid": "gm_lab.filters:Short"},
            "langid",
            "stage 'langid' is a built-in stage and also an entry point of the gristmill.stages "
            "group: gm_lab.filters:Short (entry point of gm-lab); rename that entry point",
        ),
        (
            {"short": "gm_lab.filters:Short"},
            "short",
            "stage 'short' (gm_lab.filters:Short (entry point of gm-lab)): the class's `name` is "
            "'gm_short'; an entry point is named as its class is",
        ),
        (
            {"gm_broken": "gm_lab.broken:Thing"},
            "gm_broken",
            "stage 'gm_broken' (gm_lab.broken:Thing (entry point of gm-lab)): loading it failed: "
            "ModuleNotFoundError: No module named 'gm_missing_dependency'",
        ),
        (
            {"gm_bad": "gm_lab.filters:BadParams"},
            "gm_bad",
            "stage 'gm_bad' (gm_lab.filters:BadParams (entry point of gm-lab)): its `Params`",
        ),
    ],
)
def test_a_bad_entry_point_is_refused_naming_its_package(lab, entry_points, name, message):
    dist_info(lab, entry_points)
    forget()
    with pytest.raises(PluginError) as e:
        get_stage(name)
    assert str(e.value).startswith(message)


def test_two_packages_claiming_one_name_are_refused(lab):
    dist_info(lab, {"gm_short": "gm_lab.filters:Short"})
    dist_info(lab, {"gm_short": "gm_lab.filters:Short"}, name="gm-other", version="2.0")
    forget()
    with pytest.raises(PluginError) as e:
        get_stage("gm_short")
    assert str(e.value).startswith("stage 'gm_short' is registered by more than one package: ")
    assert "(entry point of gm-lab)" in str(e.value)
    assert "(entry point of gm-other)" in str(e.value)
