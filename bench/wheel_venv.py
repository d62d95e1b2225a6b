"""A throwaway venv holding this tree installed from a wheel, as a user gets it (compiled
bytecode, no editable finder): what the ACP benchmarks spawn. Third-party packages come from the
dev `.venv` through a `.pth` line, so nothing is downloaded."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEV_VENV = ROOT / ".venv"


def build_venv(work: Path, tree: Path = ROOT, name: str = "venv") -> tuple[Path, Path]:
    """A venv (`work/name`) with `tree` (this one unless said) installed from a wheel; returns
    its (`earshot`, `python`)."""
    wheels = work / f"{name}-wheels"
    subprocess.run(
        [str(DEV_VENV / "bin" / "pip"), "wheel", "-q", "--no-deps", "-w", str(wheels), str(tree)],
        check=True,
        capture_output=True,
    )
    venv = work / name
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    [wheel] = wheels.glob("*.whl")
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    deps = DEV_VENV / "lib" / version / "site-packages"
    (venv / "lib" / version / "site-packages" / "zz_earshot_deps.pth").write_text(
        f"{deps}\n", encoding="utf-8"
    )
    shutil.rmtree(tree / "build", ignore_errors=True)
    return venv / "bin" / "earshot", venv / "bin" / "python"
