"""``trilha eval`` and ``trilha bench``: quality and latency of every system on a BEIR folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trilha.cli.options import add_lang_option, settings_of
from trilha.cli.render import table_text
from trilha.errors import BadRequestError, requires_extra
from trilha.index.language import written_code


def add_eval_parser(sub: Any) -> None:
    """The ``eval`` command and its options."""
    sp = sub.add_parser(
        "eval", help="compare bm25, dense, hybrids, rerank and LlamaIndex fusion on a BEIR folder"
    )
    _add_run_options(sp, data_required=False)
    sp.add_argument(
        "--answers",
        action="store_true",
        help="score cited answers (groundedness, citation precision, cited relevance) instead "
        "of rankings; without --data, the demo's questions over the sample corpus",
    )
    sp.add_argument("--rerank", action="store_true", help="with --answers: rerank before answering")
    sp.add_argument("--max-queries", type=int, help="evaluate the first N queries only")
    sp.add_argument("--split", default="test", help="qrels split: qrels/SPLIT.tsv (default test)")
    sp.add_argument(
        "--systems",
        metavar="A,B",
        help="evaluate only these systems (default: all), e.g. bm25,dense,hybrid_weighted",
    )
    add_lang_option(sp, "corpus documents")
    sp.add_argument(
        "--ignore-identical-ids",
        action="store_true",
        help="drop a query's own id from its results (BEIR's convention for ArguAna, Quora)",
    )
    sp.add_argument(
        "--rerank-backend",
        choices=("auto", "torch", "onnx"),
        help="reranker backend (default auto: torch bf16 where the CPU has it, else onnx int8)",
    )
    sp.add_argument(
        "--rerank-precision",
        choices=("auto", "fp32", "bf16", "int8"),
        help="reranker precision (default auto)",
    )
    sp.set_defaults(func=cmd_eval)


def add_bench_parser(sub: Any) -> None:
    """The ``bench`` command and its options."""
    sp = sub.add_parser("bench", help="warm latency per system and stage, ingest time, scale")
    _add_run_options(sp, data_required=False)
    sp.add_argument("--queries", type=int, default=100, help="queries timed (def. 100)")
    sp.add_argument(
        "--ingest-docs",
        type=int,
        metavar="N",
        help="time the ingest of the first N documents only (default: all; 0: skip it)",
    )
    sp.add_argument(
        "--systems",
        metavar="A,B",
        help="time only these systems (default: all), e.g. hybrid_weighted,orchestrated",
    )
    sp.add_argument(
        "--scale",
        type=int,
        nargs="?",
        const=100_000,
        default=None,
        help="also build a synthetic index of N units (default 100000): build time, HNSW, "
        "hybrid/filtered/dense/bm25 latency, dense recall against exact, 1,000 documents added "
        "while searching, memory and disk",
    )
    sp.add_argument(
        "--scale-queries",
        type=int,
        default=100,
        metavar="N",
        help="queries timed in the scale test (default 100)",
    )
    sp.add_argument(
        "--scale-dir",
        metavar="DIR",
        help="folder under which the scale test's temporary workspace is made (default: the "
        "system's temporary folder)",
    )
    _add_graph_bench_options(sp)
    sp.set_defaults(func=cmd_bench)


def _add_run_options(sp: argparse.ArgumentParser, data_required: bool) -> None:
    """The data, output, reranker and workspace of an eval or bench run."""
    sp.add_argument(
        "--data",
        required=data_required,
        help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)",
    )
    sp.add_argument("--out", required=True, help="output JSON file")
    sp.add_argument("--reranker", help="cross-encoder id or local path")
    sp.add_argument(
        "--workspace",
        "-w",
        "--workspace-dir",
        dest="workspace_dir",
        help="workspace to (re)use for the corpus (default: a folder beside --out)",
    )
    sp.add_argument("--quiet", "-q", action="store_true", help="no progress bars")


def _add_graph_bench_options(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--sparse-lexical",
        action="store_true",
        help="only compare BM25 on bm25s with BM25 as Qdrant sparse vectors (IDF) on --data",
    )
    sp.add_argument(
        "--graph",
        action="store_true",
        help="also time subgraph, path and "
        "top-N on a synthetic graph, on embedded FalkorDB and ArcadeDB/Bolt",
    )
    sp.add_argument(
        "--graph-entities",
        type=int,
        default=100_000,
        help="entities of the synthetic graph (default 100000)",
    )
    sp.add_argument(
        "--graph-edges",
        type=int,
        default=300_000,
        help="RELATED edges of the synthetic graph (default 300000)",
    )


def _systems(names: str | None) -> list[str] | None:
    """``--systems``: the names, each one of the bench's systems."""
    from trilha.eval.bench import SYSTEMS
    from trilha.eval.systems import known_names

    if names is None:
        return None
    return list(known_names(names.split(","), SYSTEMS, "--systems: {} is not a bench system"))


def _require_eval(command: str) -> None:
    """Check the eval extra before a run whose scores or plot need it (not at its end)."""
    with requires_extra("eval", command):
        import matplotlib  # noqa: F401
        import pytrec_eval  # noqa: F401


def cmd_eval(args: argparse.Namespace) -> int:
    """Compare retrieval systems on a BEIR folder (or score answers, ``--answers``)."""
    _require_eval("trilha eval")
    from trilha.eval.runner import run_eval

    if args.answers:
        return _eval_answers(args)
    if not args.data:
        raise BadRequestError("trilha eval needs --data DIR (a BEIR folder), or --answers")

    settings = settings_of(args)  # the reranker options over TRILHA_RERANK_*
    report = run_eval(
        Path(args.data),
        Path(args.out),
        workspace_dir=args.workspace_dir,
        reranker=args.reranker,
        split=args.split,
        max_queries=args.max_queries,
        rerank_backend=settings.rerank_backend,
        rerank_precision=settings.rerank_precision,
        rerank_max_length=settings.rerank_max_length,
        progress=not args.quiet,
        systems=args.systems.split(",") if args.systems else None,
        lang=written_code(args.lang) if args.lang else None,
        ignore_identical_ids=args.ignore_identical_ids,
    )
    print(table_text(report["systems"], ("ndcg@10", "recall@100", "mrr@10")))
    print(f"encoder: {report['config']['encoder']}")
    print(f"wrote {args.out} and {Path(args.out).with_suffix('.png')}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Warm latency of each system, stage timings, ingest and optional scale and graph tests."""
    if not (args.data or args.graph):
        raise BadRequestError("bench needs --data DIR, --graph, or both")
    _require_eval("trilha bench")
    if args.sparse_lexical:
        return _bench_sparse(args)
    report = _bench_data(args) if args.data else {}
    if args.graph:
        from trilha.graph.bench import bench_backends

        report["graph"] = bench_backends(entities=args.graph_entities, edges=args.graph_edges)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2))
    print(json.dumps({k: v for k, v in report.items() if k != "systems"}, indent=2))
    print(f"wrote {args.out}")
    return 0


def _bench_sparse(args: argparse.Namespace) -> int:
    from trilha.eval.sparse_compare import compare_lexical

    if not args.data:
        raise BadRequestError("--sparse-lexical needs --data DIR (a BEIR folder)")
    lang = written_code(args.lang) if getattr(args, "lang", None) else "en"
    report = compare_lexical(Path(args.data), lang=lang, max_queries=args.queries or None)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    return 0


def _bench_data(args: argparse.Namespace) -> dict[str, Any]:
    """The BEIR part of the benchmark, its latency table printed."""
    from trilha.eval.bench import run_bench

    report = run_bench(
        Path(args.data),
        Path(args.out),
        workspace_dir=args.workspace_dir,
        queries=args.queries,
        reranker=args.reranker,
        scale=args.scale,
        scale_queries=args.scale_queries,
        scale_dir=args.scale_dir,
        progress=not args.quiet,
        ingest_docs=args.ingest_docs,
        systems=_systems(args.systems),
    )
    print(table_text(report["systems"], ("p50_ms", "p95_ms", "qps")))
    if "orchestrated" in report["stages"]:
        steps = {name: {"p50_ms": ms} for name, ms in report["stages"]["orchestrated"].items()}
        print("orchestrated retrieve, P50 per step:")
        print(table_text(steps, ("p50_ms",)))
    return report


def _eval_answers(args: argparse.Namespace) -> int:
    from trilha.eval.answers import run_answer_eval

    report = run_answer_eval(
        Path(args.data) if args.data else None,
        Path(args.out),
        args.workspace_dir,
        split=args.split,
        max_queries=args.max_queries,
        rerank=args.rerank,
        lang=written_code(args.lang) if args.lang else None,
        settings=settings_of(args),
        progress=not args.quiet,
    )
    lat = report["latency"]
    print(
        f"{report['dataset']}: {report['n_questions']} questions, answered {report['answered']}, "
        f"groundedness {report['groundedness']}, citation precision "
        f"{report['citation_precision']}, cited relevant {report['cited_relevant']}, answers "
        f"citing a relevant document {report['answers_citing_relevant']}"
    )
    composers = ", ".join(report["composer"])
    print(f"ask P50 {lat.get('p50_ms')} ms, P95 {lat.get('p95_ms')} ms ({composers})")
    print(f"judge: {report['judge']}")
    print(f"wrote {args.out}")
    return 0
