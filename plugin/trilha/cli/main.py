"""``trilha``: ingest, query, demo, eval and bench from the command line.

Every command takes ``--workspace`` (default ``TRILHA_WORKSPACE`` or ``.trilha``). Errors are
printed as one line saying what to do, with exit status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from trilha.errors import BadRequestError, TrilhaError, one_line

DEMO_QUESTIONS = (
    "Quais são os requisitos para trabalhar remotamente?",
    "What is the deadline to report a security incident?",
    "Qual o prazo prescricional para cobrança de dívida?",
)
#: Who asks the demo's questions (a user of the sample principals.yaml).
DEMO_USER = "maria.cfo"
#: The demo's visibility question, asked by each of these (None: anonymous).
DEMO_VISIBILITY = (
    "Quais são os requisitos para o trabalho remoto?",
    (None, "maria.cfo", "bruno.ti", "carla.beta"),
)


def _settings(args: argparse.Namespace) -> Any:
    from trilha.settings import TrilhaSettings

    overrides: dict[str, Any] = {}
    if getattr(args, "workspace", None):
        overrides["workspace"] = Path(args.workspace)
    if getattr(args, "reranker", None):
        overrides["reranker_model"] = args.reranker
    if getattr(args, "rerank_backend", None):
        overrides["rerank_backend"] = args.rerank_backend
    if getattr(args, "rerank_precision", None):
        overrides["rerank_precision"] = args.rerank_precision
    try:
        return TrilhaSettings(**overrides)
    except ValidationError as e:
        raise BadRequestError(f"invalid settings: {one_line(e)}") from e


def _open(args: argparse.Namespace, *, create: bool = False, repair: bool = True) -> Any:
    """The workspace of ``--workspace``; only commands that write (ingest, demo) create one."""
    from trilha.workspace import Workspace

    return Workspace.open(settings=_settings(args), create=create, repair=repair)


def _principal(args: argparse.Namespace, workspace: Path) -> Any:
    """The principal of ``--user`` (from the workspace's principals.yaml) or ``--as-principal``
    (a file of its fields); None, which searches as anonymous, when neither is given."""
    from trilha.access.directory import find_principal, load_principal_file

    user, path = getattr(args, "user", None), getattr(args, "as_principal", None)
    if user and path:
        raise BadRequestError("give --user or --as-principal, not both")
    if user:
        return find_principal(workspace, user)
    if path:
        return load_principal_file(Path(path))
    return None


def _filters(args: argparse.Namespace) -> dict[str, Any] | None:
    f: dict[str, Any] = {}
    if args.tags is not None:  # --tags "" is an empty list, refused with a clear line
        f["tags"] = [t.strip() for t in args.tags.split(",") if t.strip()]
    for name in ("lang", "setor", "tema", "ministro", "resultado"):
        value = getattr(args, name)
        if value:
            f[name] = value
    if args.date_from:
        f["data_inicio"] = args.date_from
    if args.date_to:
        f["data_fim"] = args.date_to
    if args.tipos_recurso:
        f["tipos_recurso"] = args.tipos_recurso.split(",")
    if args.max_sensitivity is not None:
        f["max_sensitivity"] = args.max_sensitivity
    if args.filters_json:
        try:
            extra = json.loads(args.filters_json)
        except json.JSONDecodeError as e:
            raise BadRequestError(f"--filters is not valid JSON: {e.msg}") from e
        if not isinstance(extra, dict):
            raise BadRequestError("--filters must be a JSON object of filter fields")
        f.update(extra)
    return f or None


def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest files or folders; exit 2 when any file was refused."""
    if not (args.paths or args.delete or args.records):
        raise BadRequestError(
            "nothing to do: give files or folders to ingest, --delete or --records"
        )
    for path in [*args.paths, *(args.records or [])]:
        if not Path(path).exists():  # checked before a workspace is created for nothing
            raise BadRequestError(f"{path} does not exist; check the path")
    refused = 0
    with _open(args, create=True) as ws:
        for doc_id in args.delete or []:
            if not ws.has_doc(doc_id):
                raise BadRequestError(
                    f"no document {doc_id!r} in workspace {ws.path}; nothing deleted"
                )
            n = ws.delete(doc_id)
            _say(args, f"deleted {doc_id}: {n} units")
        for path in args.paths:
            report = ws.ingest(
                ws.load(path), progress=not (args.quiet or args.json), max_words=args.max_words
            )
            refused += len(report.refused)
            if args.json:
                print(json.dumps({"path": path, **report.summary()}, ensure_ascii=False))
                continue
            for refusal in report.refused:
                print(f"refused {refusal}", file=sys.stderr)
            for error in report.errors:
                print(f"warning: {error}", file=sys.stderr)
            print(
                f"{path}: {report.docs_added} added, {report.docs_updated} updated, "
                f"{report.docs_unchanged} unchanged, {len(report.refused)} refused, "
                f"{report.units_written} units written in {report.seconds:.1f} s"
            )
        for file in args.records or []:
            _say(args, f"{file}: {ws.ingest_records(Path(file))} graph records written")
        _say(args, f"workspace {ws.path}: {len(ws)} units")
    if refused:
        if not args.json:
            print(
                f"trilha ingest: {refused} refused (see above); fix them and ingest again",
                file=sys.stderr,
            )
        return 2
    return 0


def _say(args: argparse.Namespace, line: str) -> None:
    """A human-readable line: on stdout, or on stderr when stdout carries JSON."""
    print(line, file=sys.stderr if getattr(args, "json", False) else sys.stdout)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Compare the id sets of the three indices; repair with --repair. Exit 0 when equal."""
    with _open(args, repair=False) as ws:
        found = ws.check()
        after = None
        if args.repair and not found.consistent:
            ws.repair(progress=not (args.quiet or args.json))
            after = ws.check()
        if args.json:
            data = {"before": found.model_dump(), "consistent": found.consistent}
            if after is not None:
                data.update(after=after.model_dump(), repaired=after.consistent)
            print(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            print("\n".join(found.lines()))
            if after is not None:
                print(
                    "after repair: "
                    + ("consistent" if after.consistent else "\n".join(after.lines()))
                )
    final = after if after is not None else found
    return 0 if final.consistent else 1


def cmd_query(args: argparse.Namespace) -> int:
    """Search the workspace."""
    from trilha.cli.render import render_result

    with _open(args) as ws:
        if len(ws) == 0:
            raise BadRequestError(
                f"workspace {ws.path} is empty; run `trilha ingest PATH -w {ws.path}` first"
            )
        result = ws.search(
            args.query,
            top_k=args.k,
            filters=_filters(args),
            merge=args.merge,
            candidates=args.candidates,
            rerank=args.rerank,
            principal=_principal(args, ws.path),
        )
        if args.json:
            print(result.model_dump_json(indent=2))
        else:
            print(render_result(result))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the packaged sample corpus, ask three questions as one user, then one question as
    four users (anonymous included) to show that each sees only what they may."""
    import shutil
    from importlib.resources import files

    from trilha.access.directory import PRINCIPALS_FILE, find_principal
    from trilha.cli.render import render_result
    from trilha.ingest.loaders import load_path

    samples = files("trilha.samples")
    with _open(args, create=True) as ws:
        report = ws.ingest(load_path(Path(str(samples / "corpus"))), progress=False)
        if ws.graph is not None:
            ws.ingest_records(Path(str(samples / "graph" / "records.jsonl")))
        if not (ws.path / PRINCIPALS_FILE).exists():
            shutil.copyfile(Path(str(samples / PRINCIPALS_FILE)), ws.path / PRINCIPALS_FILE)
        print(
            f"sample corpus: {report.docs_added + report.docs_updated} documents indexed, "
            f"{report.docs_unchanged} unchanged; {len(ws)} units in {ws.path}\n"
        )
        asker = find_principal(ws.path, DEMO_USER)
        for question in DEMO_QUESTIONS:
            print(f"Q ({DEMO_USER}): {question}")
            result = ws.search(question, top_k=args.k, rerank=bool(args.reranker), principal=asker)
            print(render_result(result) + "\n")
        question, users = DEMO_VISIBILITY
        print(f"Same question, four users (users are in {ws.path / PRINCIPALS_FILE}): {question}")
        for user in users:
            who = None if user is None else find_principal(ws.path, user)
            hits = ws.search(question, top_k=max(args.k, 3), principal=who).hits
            docs = list(dict.fromkeys(h.unit.doc_id for h in hits))
            print(f"  {user or 'anonymous':<11} -> {', '.join(docs) or '(nothing visible)'}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Compare retrieval systems on a BEIR folder."""
    from trilha.eval.runner import run_eval

    report = run_eval(
        Path(args.data),
        Path(args.out),
        workspace_dir=args.workspace_dir,
        reranker=args.reranker,
        max_queries=args.max_queries,
        rerank_backend=args.rerank_backend,
        rerank_precision=args.rerank_precision,
        progress=not args.quiet,
    )
    _print_table(report["systems"], ("ndcg@10", "recall@100", "mrr@10"))
    print(f"wrote {args.out} and {Path(args.out).with_suffix('.png')}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Warm latency of each system, stage timings, ingest and optional scale and graph tests."""
    report: dict[str, Any] = {}
    if args.data:
        from trilha.eval.bench import run_bench

        report = run_bench(
            Path(args.data),
            Path(args.out),
            workspace_dir=args.workspace_dir,
            queries=args.queries,
            reranker=args.reranker,
            scale=args.scale,
            progress=not args.quiet,
            ingest_docs=args.ingest_docs,
        )
        _print_table(report["systems"], ("p50_ms", "p95_ms", "qps"))
    elif not args.graph:
        raise BadRequestError("bench needs --data DIR, --graph, or both")
    if args.graph:
        from trilha.graph.bench import bench_backends

        report["graph"] = bench_backends(entities=args.graph_entities, edges=args.graph_edges)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2))
    print(json.dumps({k: v for k, v in report.items() if k != "systems"}, indent=2))
    print(f"wrote {args.out}")
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    """Graph retrieval: subgraph, path, topn, mermaid, context, png, records."""
    from trilha.graph.export import mermaid

    with _open(args) as ws:
        graph = ws.require_graph()
        names = getattr(args, "entity", None) or None
        op = args.graph_command
        doc_id = getattr(args, "doc_id", None)
        who = _principal(args, ws.path)
        if doc_id is not None and not _sees_doc(ws, doc_id, who):  # hidden reads as missing
            raise BadRequestError(
                f"no document {doc_id!r} in workspace {ws.path}; `trilha query` finds doc ids"
            )
        if op == "records":
            print(f"{ws.ingest_records(Path(args.file))} records written")
            return 0
        if op in ("subgraph", "mermaid", "png"):
            result: Any = graph.subgraph(
                args.doc_id, names, args.max_hops, args.limit, principal=who
            )
        elif op == "path":
            result = graph.path(args.source, args.target, args.max_length, principal=who)
        elif op == "topn":
            result = graph.topn(
                names,
                args.category,
                args.language,
                args.limit,
                reasons_lang=args.lang,
                principal=who,
            )
        else:
            if not names and doc_id is None:
                raise BadRequestError(
                    "graph context needs --entity NAME (repeatable) or --doc-id ID; "
                    "`trilha graph topn` and `trilha query` show both"
                )
            print(
                graph.context_md(
                    args.doc_id,
                    names or [],
                    language=args.language,
                    limit=args.limit,
                    lang=args.lang,
                    principal=who,
                )
            )
            return 0
        if op == "mermaid":
            print(mermaid(result))
        elif op == "png":
            from trilha.graph.drawing import draw_png

            draw_png(result, Path(args.out))
            print(f"wrote {args.out}")
        elif args.json:
            print(result.model_dump_json(indent=2))
        else:
            print(_graph_text(result))
    return 0


def _sees_doc(ws: Any, doc_id: str, principal: Any) -> bool:
    """Whether ``principal`` (None: anonymous) may see document ``doc_id`` of the workspace."""
    from trilha.access import ACCESS_KEYS, Access, Principal, visible

    units = ws.doc_units(doc_id)
    fields = units[0].model_dump(include=set(ACCESS_KEYS)) if units else None
    return fields is not None and visible(Access(**fields), principal or Principal.anonymous())


def _graph_text(result: Any) -> str:
    data = result.model_dump()
    if "items" in data:
        return (
            "\n".join(
                f"{i}. [{it['score']:.3f}] {it['doc_id']} — {it['title'] or '(untitled)'}\n   "
                + "; ".join(it["reasons"])
                for i, it in enumerate(data["items"], 1)
            )
            or "(no documents)"
        )
    nodes = data.get("nodes", data.get("path", []))
    lines = [f"{len(nodes)} nodes, {len(data['edges'])} edges"]
    lines += [f"  {e['source']} -[{e['type']}]-> {e['target']}" for e in data["edges"]]
    meta = data.get("constraints") or data.get("meta") or {}
    lines.append(f"  limits: {json.dumps(meta, ensure_ascii=False)}")
    return "\n".join(lines)


def _print_table(rows: dict[str, dict[str, float]], cols: Sequence[str]) -> None:
    print(f"{'system':<28}" + "".join(f"{c:>12}" for c in cols))
    for name, values in rows.items():
        print(f"{name:<28}" + "".join(f"{values.get(c, float('nan')):>12.4f}" for c in cols))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also used to render ``--help``)."""
    p = argparse.ArgumentParser(
        prog="trilha",
        description="Hybrid, graph-aware retrieval with provenance for LlamaIndex agents.",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def who(sp: argparse.ArgumentParser) -> None:
        group = sp.add_argument_group("who asks (default: anonymous, who sees public items only)")
        group.add_argument("--user", help="a user of the workspace's principals.yaml")
        group.add_argument(
            "--as-principal", metavar="FILE", help="YAML/JSON file of a principal's fields"
        )

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--workspace", "-w", help="workspace folder (default: TRILHA_WORKSPACE or .trilha)"
        )
        sp.add_argument("--quiet", "-q", action="store_true", help="no progress bars")

    sp = sub.add_parser("ingest", help="ingest .md, .txt and .jsonl files or folders")
    common(sp)
    sp.add_argument("paths", nargs="*", help="files or folders to ingest")
    sp.add_argument(
        "--delete",
        action="append",
        metavar="DOC_ID",
        help="remove a document from every index (repeatable)",
    )
    sp.add_argument("--max-words", type=int, default=180, help="words per unit (default 180)")
    sp.add_argument(
        "--records",
        action="append",
        metavar="FILE",
        help="graph records (JSON/JSONL nodes and edges) to write (repeatable)",
    )
    sp.add_argument(
        "--json",
        action="store_true",
        help="print {added, updated, unchanged, refused, units_written} per path as JSON",
    )
    sp.set_defaults(func=cmd_ingest)

    sp = sub.add_parser(
        "doctor", help="check that the unit store, dense index and graph hold the same units"
    )
    common(sp)
    sp.add_argument("--repair", action="store_true", help="remove orphans, restore missing units")
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.set_defaults(func=cmd_doctor)

    sp = sub.add_parser("query", help="hybrid search with filters, merge mode and rerank")
    common(sp)
    sp.add_argument("query", help="the question")
    sp.add_argument("-k", type=int, default=None, help="results (default 10; 12 with --rerank)")
    sp.add_argument("--merge", choices=("weighted", "rrf"), help="merge mode (default weighted)")
    sp.add_argument("--candidates", type=int, help="pool before rerank (seed 002's k, def. 40)")
    sp.add_argument("--rerank", action="store_true", help="rerank with the cross-encoder")
    sp.add_argument("--reranker", help="cross-encoder id or local path (TRILHA_RERANKER_MODEL)")
    sp.add_argument("--rerank-backend", choices=("torch", "onnx"), help="reranker backend")
    sp.add_argument(
        "--rerank-precision",
        choices=("auto", "fp32", "bf16", "int8"),
        help="precision (default auto)",
    )
    sp.add_argument("--tags", help="comma-separated; a unit matches any of them")
    sp.add_argument("--lang", help="language code, e.g. pt or en")
    sp.add_argument("--setor", help="sector")
    sp.add_argument("--tema", help="theme")
    sp.add_argument("--ministro", help="judge (case-insensitive)")
    sp.add_argument("--resultado", help="decision outcome")
    sp.add_argument("--tipos-recurso", help="comma-separated appeal types")
    sp.add_argument("--date-from", help="earliest date, YYYY-MM-DD or YYYYMMDD")
    sp.add_argument("--date-to", help="latest date, YYYY-MM-DD or YYYYMMDD")
    sp.add_argument("--max-sensitivity", type=int, help="exclude units above this level")
    sp.add_argument("--filters", dest="filters_json", help="filter fields as a JSON object")
    who(sp)
    sp.add_argument("--json", action="store_true", help="print the result as JSON")
    sp.set_defaults(func=cmd_query)

    sp = sub.add_parser("demo", help="index the bundled sample corpus and ask three questions")
    common(sp)
    sp.add_argument("-k", type=int, default=3, help="results per question (default 3)")
    sp.add_argument("--reranker", help="optional cross-encoder id or local path")
    sp.set_defaults(func=cmd_demo)

    sp = sub.add_parser(
        "graph", help="graph retrieval: subgraph, path, topn, mermaid, context, png, records"
    )
    gsub = sp.add_subparsers(dest="graph_command", required=True, metavar="GRAPH_COMMAND")

    def graph_common(g: argparse.ArgumentParser, json_output: bool = True) -> None:
        common(g)
        who(g)
        if json_output:
            g.add_argument("--json", action="store_true", help="print the seed 003 JSON")

    for op in ("subgraph", "mermaid", "png"):
        g = gsub.add_parser(
            op,
            help={
                "subgraph": "nodes and edges around a document (≤2 hops)",
                "mermaid": "a document's subgraph as mermaid text",
                "png": "a document's subgraph drawn to a PNG",
            }[op],
        )
        graph_common(g, json_output=op == "subgraph")
        g.add_argument("doc_id", help="document id")
        g.add_argument("--entity", action="append", help="only paths to this entity (repeat)")
        g.add_argument("--max-hops", type=int, default=2, help="0–2 (default 2)")
        g.add_argument("--limit", type=int, default=30, help="nodes/edges cap (default 30)")
        if op == "png":
            g.add_argument("--out", required=True, help="PNG file to write")
    g = gsub.add_parser("path", help="shortest RELATED path between two entities")
    graph_common(g)
    g.add_argument("source", help="source entity name")
    g.add_argument("target", help="target entity name")
    g.add_argument("--max-length", type=int, default=4, help="1–6 (default 4)")
    g = gsub.add_parser("topn", help="documents related to entities, with reasons")
    graph_common(g)
    g.add_argument("--entity", action="append", help="entity name (repeat)")
    g.add_argument("--category", help="preferred category")
    g.add_argument("--language", help="document language, e.g. pt")
    g.add_argument("--lang", choices=("en", "pt", "zh"), default="en", help="reasons language")
    g.add_argument("--limit", type=int, default=5, help="documents (default 5)")
    g = gsub.add_parser("context", help="context.md (seed 003 §5) for entities")
    graph_common(g, json_output=False)
    g.add_argument("--entity", action="append", help="entity name (repeat)")
    g.add_argument(
        "--doc-id", help="document whose subgraph to show (default: the entities' top document)"
    )
    g.add_argument("--language", help="document language filter for top-N")
    g.add_argument("--lang", choices=("en", "pt", "zh"), default="en", help="template language")
    g.add_argument("--limit", type=int, default=5, help="top documents (default 5)")
    g = gsub.add_parser("records", help="write explicit graph records (JSON/JSONL)")
    graph_common(g, json_output=False)
    g.add_argument("file", help="records file")
    sp.set_defaults(func=cmd_graph)

    for name, helptext in (
        ("eval", "compare bm25, dense, hybrids, rerank and LlamaIndex fusion on a BEIR folder"),
        ("bench", "warm latency per system and stage, ingest time, scale"),
    ):
        sp = sub.add_parser(name, help=helptext)
        sp.add_argument(
            "--data",
            required=name == "eval",
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
        if name == "eval":
            sp.add_argument("--max-queries", type=int, help="evaluate the first N queries only")
            sp.add_argument(
                "--rerank-backend",
                choices=("torch", "onnx"),
                default="torch",
                help="reranker backend (default torch)",
            )
            sp.add_argument(
                "--rerank-precision",
                choices=("auto", "fp32", "bf16", "int8"),
                default="auto",
                help="reranker precision (default auto)",
            )
            sp.set_defaults(func=cmd_eval)
        else:
            sp.add_argument("--queries", type=int, default=100, help="queries timed (def. 100)")
            sp.add_argument(
                "--ingest-docs",
                type=int,
                metavar="N",
                help="time the ingest of the first N documents only (default: all)",
            )
            sp.add_argument(
                "--scale",
                type=int,
                nargs="?",
                const=100_000,
                default=None,
                help="also build a synthetic index of N units (default 100000)",
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
            sp.set_defaults(func=cmd_bench)
    return p


def _quiet_libraries(verbose: bool) -> None:
    """The command is an application: it may set levels (the library never does)."""
    import warnings

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not verbose:
        warnings.filterwarnings("ignore")
        for name in ("bm25s", "sentence_transformers", "transformers", "optimum", "httpx"):
            logging.getLogger(name).setLevel(logging.ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``trilha`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # SIGTERM exits through SystemExit so embedded servers are stopped by their finalizers
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    _quiet_libraries(args.verbose)
    try:
        return int(args.func(args))
    except TrilhaError as e:
        print(f"trilha {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `trilha … | head` closed the pipe: stop quietly, like cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as e:  # a bug, not bad input: say so in one line unless -v asks for more
        if args.verbose:
            raise
        print(
            f"trilha {args.command}: internal error: {type(e).__name__}: {e} "
            "(run with -v for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
