import subprocess
import sys

# in a fresh process: this one may have imported huggingface_hub already
CHECK = """
import sys
import gristmill.pipeline.run.cluster
import datatrove.io as dtio
from fsspec.implementations.local import LocalFileSystem

cheap = "huggingface_hub" not in sys.modules
local = isinstance(LocalFileSystem(), dtio.HfFileSystem)
files = dtio.get_datafolder(sys.argv[1]).list_files()
still_cheap = "huggingface_hub" not in sys.modules

import huggingface_hub
from huggingface_hub import HfApi, HfFileSystem

hub = isinstance(HfFileSystem(token=False), dtio.HfFileSystem)
assets = dtio.cached_assets_path(library_name="gristmill-test", namespace="n")
print(cheap, local, files, still_cheap, hub, assets.is_dir(), huggingface_hub.HfApi is HfApi)
"""


def test_datatrove_io_loads_without_huggingface_hub_and_still_knows_an_hf_filesystem(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.jsonl").write_text("{}\n")
    env = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "PATH": ""}
    cmd = [sys.executable, "-c", CHECK, str(tmp_path / "data")]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    # the Ray and Slurm executors import datatrove.io without huggingface_hub; a local folder
    # is listed without it too; once imported, the real package is there, an HfFileSystem is
    # recognised as one, and datatrove's download folder comes from huggingface_hub's own one
    assert run.stdout.split() == ["True", "False", "['a.jsonl']", "True", "True", "True", "True"]
