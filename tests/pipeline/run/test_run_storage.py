"""The run's storage object (stages/formats/fs.py, pipeline/run/inputs.py): built once in the
plan, the same object in the reader and the split planner, pickled with them to the workers,
and out of the run key."""

import pickle

from gristmill.pipeline.run.phases import plan_run
from gristmill.pipeline.run.plan import RunPlan
from gristmill.stages.read.sources import ReadSources
from tests.pipeline.conftest import sample_config_at

OPTIONS = {"s3": {"anon": True}, "gs": {"token": "anon"}}


def test_the_reader_and_the_split_planner_take_the_plans_storage(tmp_path):
    plan = RunPlan.load(sample_config_at(tmp_path, storage_options=OPTIONS), keyed=False)
    phases, _ = plan_run(plan, tmp_path / "work")
    (reader,) = [s for p in phases for s in p.steps if isinstance(s, ReadSources)]
    assert reader.storage is plan.storage and reader.splitting.storage is plan.storage
    assert plan.storage.options == OPTIONS
    back = pickle.loads(pickle.dumps(reader))  # as a local, Ray or Slurm worker gets it
    assert back.storage == plan.storage and back.splitting.storage == plan.storage


def test_storage_options_stay_out_of_the_run_key(tmp_path):
    plain = RunPlan.load(sample_config_at(tmp_path))
    given = RunPlan.load(sample_config_at(tmp_path, storage_options=OPTIONS))
    assert given.storage.options == OPTIONS != plain.storage.options
    assert given.key == plain.key and given.recorded == plain.recorded
