"""Build one evaluation set in BEIR format from its public source files.

Usage: ``python evalsets/build.py NAME --source PATH --out DIR``; ``NAME`` is one of
``BUILDERS`` below and ``PATH`` is the folder holding that source's files (see
evalsets/README.md for where each comes from). The output is deterministic.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from ementas import read_ementas
from evalset import EvalSet, assemble, write_beir
from pira import read_pira
from pubmedqa import read_pubmedqa
from squad_style import read_restructured, read_squad
from statutes import read_statutes

Built = tuple[EvalSet, list[Path]]


def build_squad_pt(source: Path) -> Built:
    """SQuAD 1.1 dev, machine-translated to Portuguese: question -> its paragraph."""
    passages, questions = read_restructured(source, "dev-v1.1-pt-reestruturado")
    files = [source / f"dev-v1.1-pt-reestruturado-{p}.json" for p in ("contexts", "questions")]
    return assemble("squad-pt", passages, questions, max_per_doc=1), files


def build_cmrc2018(source: Path) -> Built:
    """CMRC 2018 dev + trial (simplified Chinese Wikipedia): question -> its paragraph."""
    files = [source / "cmrc2018_dev.json", source / "cmrc2018_trial.json"]
    passages, questions = [], []
    for path, prefix in zip(files, ("dev", "trial"), strict=True):
        p, q = read_squad(path, prefix)
        passages += p
        questions += q
    return assemble("cmrc2018", passages, questions, max_per_doc=2), files


def build_faquad(source: Path) -> Built:
    """FaQuAD (UFMS regulations): question -> its paragraph; train.json + dev.json pooled."""
    files = [source / "train.json", source / "dev.json"]
    passages, questions = [], []
    for path, prefix in zip(files, ("train", "dev"), strict=True):
        p, q = read_squad(path, prefix)
        passages += p
        questions += q
    return assemble("faquad", passages, questions), files


def build_statutes_adm(source: Path) -> Built:
    """Administrative statutes with exam items: item -> the article it was asked about."""
    passages, questions, files = read_statutes(source)
    return assemble("statutes-adm", passages, questions), files


def build_tjal_ementas(source: Path) -> Built:
    """TJAL ementas: capitalised keyword heading -> the numbered holdings it heads."""
    path = source / "dataset.zip"
    passages, questions = read_ementas(path)
    return assemble("tjal-ementas", passages, questions), [path]


def build_pira_pt(source: Path) -> Built:
    """Pirá 2.0 in Portuguese: question -> its supporting text; the source's split."""
    passages, questions, files = read_pira(source)
    return assemble("pira-pt", passages, questions), files


def build_pira_en(source: Path) -> Built:
    """Pirá 2.0 in English: question -> its (original) supporting text; the source's split."""
    passages, questions, files = read_pira(source, "en")
    return assemble("pira-en", passages, questions), files


def build_pubmedqa(source: Path) -> Built:
    """PubMedQA's labelled articles: question -> its abstract; the source's split."""
    passages, questions, files = read_pubmedqa(source)
    return assemble("pubmedqa", passages, questions), files


BUILDERS: dict[str, Callable[[Path], Built]] = {
    "squad-pt": build_squad_pt,
    "cmrc2018": build_cmrc2018,
    "faquad": build_faquad,
    "statutes-adm": build_statutes_adm,
    "tjal-ementas": build_tjal_ementas,
    "pira-pt": build_pira_pt,
    "pira-en": build_pira_en,
    "pubmedqa": build_pubmedqa,
}


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, build the named set, print its manifest."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(BUILDERS))
    parser.add_argument("--source", type=Path, required=True, help="folder of source files")
    parser.add_argument("--out", type=Path, required=True, help="BEIR folder to write")
    args = parser.parse_args(argv)
    evalset, files = BUILDERS[args.name](args.source)
    manifest = write_beir(evalset, args.out, files)
    print(json.dumps(manifest, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
