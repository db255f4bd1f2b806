import subprocess
import sys

import orjson
import pytest

from gristmill.stages.base import FIRST
from gristmill.stages.registry import IMPLICIT_FIRST_NAMES, STAGES, UnknownStage, get_stage
from tests.pipeline.conftest import sample_config_at


def test_each_name_is_its_classes_and_the_implicit_stages_are_those_that_come_first():
    assert [cls.name for cls in STAGES.values()] == list(STAGES)
    assert tuple(n for n, cls in STAGES.items() if cls.position == FIRST) == IMPLICIT_FIRST_NAMES
    with pytest.raises(UnknownStage) as e:
        get_stage("langid_v9")
    assert str(e.value) == (
        f"unknown stage 'langid_v9'; did you mean `langid`? valid stages: {', '.join(STAGES)}; "
        "or a stage class by its import path, `package.module:Class`"
    )


# in a fresh process: this one has imported every stage already
RUN = """
import sys, orjson
from gristmill.pipeline.cli import main
from gristmill.pipeline.run.runner import run
from gristmill.stages import registry

modules = {n: where.split(":")[0] for n, where in registry._ORDER}
before = sorted(n for n, m in modules.items() if m in sys.modules)
manifest = run(sys.argv[1], echo=lambda s: None)
after = sorted(n for n, m in modules.items() if m in sys.modules)
print(orjson.dumps([before, after]).decode())
"""


@pytest.mark.slow
def test_a_run_imports_only_its_stages(tmp_path):
    cfg = sample_config_at(tmp_path, stages=[{"quality": {"language": "en"}}, "tokenize", "pack"])
    out = subprocess.run([sys.executable, "-c", RUN, str(cfg)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    before, after = orjson.loads(out.stdout.splitlines()[-1])
    assert before == []  # the CLI and the runner import no stage
    assert after == ["pack", "provenance", "quality", "tokenize"]  # provenance: always first
