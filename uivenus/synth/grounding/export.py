"""Grounding datasets on disk: `annotations.json` beside `images/`, and a Parquet copy for training.

The JSON is a list of ScreenSpot-v2-style records (bbox [x1, y1, x2, y2] in pixels) with our extra fields;
Parquet rows are the same records with the PNG bytes embedded, typed so `datasets` loads `image` as an
Image feature (`datasets.load_dataset("parquet", data_files=...)`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uivenus.files import atomic_path, write_text
from uivenus.records import read_json_list
from uivenus.synth import SynthError

ANNOTATIONS = "annotations.json"
IMAGES = "images"


class DatasetError(SynthError):
    """A grounding dataset folder is missing or malformed; the message names the file."""


def write_annotations(out_dir: str | Path, annotations: Sequence[dict[str, Any]]) -> Path:
    """Write annotations.json atomically (a reader never sees half a file), one record per line."""
    lines = ",\n".join(json.dumps(record, ensure_ascii=False) for record in annotations)
    return write_text(Path(out_dir) / ANNOTATIONS, f"[\n{lines}\n]\n" if lines else "[]\n")


def read_annotations(dataset_dir: str | Path) -> list[dict[str, Any]]:
    path = Path(dataset_dir) / ANNOTATIONS
    if not path.is_file():
        raise DatasetError(f"{path} not found; generate a dataset first (uivenus synth grounding --out {dataset_dir})")
    return read_json_list(path, DatasetError, "records")


def _features() -> Any:
    from datasets import Features, Image, List, Value

    return Features(
        {
            "id": Value("string"),
            "image": Image(),
            "img_filename": Value("string"),
            "bbox": List(Value("int32")),
            "instruction": Value("string"),
            "data_type": Value("string"),
            "platform": Value("string"),
            "img_size": List(Value("int32")),
            "instruction_kind": Value("string"),
            "negative": Value("bool"),
            "seed": Value("int64"),
            "index": Value("int64"),
            "target": Value("string"),
            "absent": Value("string"),
            "domain": Value("string"),
        }
    )


def export_parquet(dataset_dir: str | Path, out: str | Path, *, rows_per_group: int = 1000) -> Path:
    """One Parquet file, one row per instruction with its screen's PNG bytes; returns its path.

    Rows of one screen share a row group whose image column is dictionary-encoded, so a screen's bytes are
    stored once however many instructions it has; groups are written as they fill (memory stays bounded).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(dataset_dir)
    records = read_annotations(root)
    schema = _features().arrow_schema  # carries the `huggingface` metadata that makes `image` an Image
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    batch: list[dict[str, Any]] = []
    name, data = None, b""
    with (atomic_path(out_path) as tmp,
          pq.ParquetWriter(str(tmp), schema, use_dictionary=["image.bytes"],
                           dictionary_pagesize_limit=1 << 30) as writer):
        for record in records:
            if record["img_filename"] != name:
                if len(batch) >= rows_per_group:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch = []
                name = record["img_filename"]
                path = root / IMAGES / name
                if not path.is_file():
                    raise DatasetError(f"{path} is named in {ANNOTATIONS} but missing")
                data = path.read_bytes()
            row = {key: record.get(key) for key in schema.names if key != "image"}
            row["image"] = {"bytes": data, "path": name}
            batch.append(row)
        if batch:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return out_path
