"""``trilha``: ingest, query, demo, eval and bench from the command line.

Every command takes ``--workspace`` (default ``TRILHA_WORKSPACE`` or ``.trilha``). Errors are
printed as one line saying what to do, with exit status 2; never a traceback. Each command's
options and its ``cmd_*`` function live in a module of its own (``cli/ingest.py``,
``cli/query.py``, ``cli/graph.py``…), named in :data:`COMMANDS`; this one builds the parser and
runs the command. A command line that names its command imports that command's module alone
(``trilha query`` reads nothing of ``trilha serve``); ``trilha --help`` and a command line
without one build them all.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Any, NoReturn

from trilha.errors import BadRequestError, MissingDependencyError, TrilhaError
from trilha.index.language import written_code

#: What an integer or a number option takes: ASCII digits as a user types them (``int()`` and
#: ``float()`` alone also take ``1_0``, `` 5``, other scripts' digits, ``nan`` and ``inf``).
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what is wrong, where to read more) instead
    of the usage block, and integer and number options take plain digits only; subcommands'
    parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        pattern = {int: _INTEGER, float: _NUMBER}.get(action.type)  # type: ignore[call-overload]
        if pattern is not None and not pattern.fullmatch(arg_string):
            kind = "an integer such as 5" if action.type is int else "a number such as 1.5"
            raise argparse.ArgumentError(action, f"{arg_string!r} is not {kind}")
        return super()._get_value(action, arg_string)

    def command(self, name: str) -> argparse.ArgumentParser:
        """The parser of subcommand ``name`` (this one when there is none)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and name in action.choices:
                return action.choices[name]  # type: ignore[no-any-return]
        return self


#: Every command, in the order ``trilha --help`` lists them: the module of ``trilha.cli`` that
#: holds it and the function there that adds its parser.
COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("ingest", "add_parser"),
    "doctor": ("doctor", "add_parser"),
    "query": ("query", "add_parser"),
    "ask": ("ask", "add_parser"),
    "dual-search": ("dual", "add_parser"),
    "features": ("features", "add_parser"),
    "demo": ("demo", "add_parser"),
    "graph": ("graph", "add_parser"),
    "eval": ("evaluate", "add_eval_parser"),
    "bench": ("evaluate", "add_bench_parser"),
    "tune": ("tune", "add_parser"),
    "distil": ("distil", "add_parser"),
    "info": ("info", "add_parser"),
    "prequery": ("prequery", "add_parser"),
    "context": ("context", "add_parser"),
    "jobs": ("jobs", "add_parser"),
    "serve": ("serve", "add_parser"),
    "mcp": ("mcp", "add_parser"),
    "load": ("load", "add_parser"),
}


def build_parser(command: str | None = None) -> _OneLineParser:
    """The argument parser (also used to render ``--help``): of every command, or of
    ``command`` alone (one of :data:`COMMANDS`)."""
    p = _OneLineParser(
        prog="trilha",
        description="Hybrid, graph-aware retrieval with provenance for LlamaIndex agents.",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in [command] if command in COMMANDS else COMMANDS:
        module, adder = COMMANDS[name]
        getattr(import_module(f"trilha.cli.{module}"), adder)(sub)
    return p


def _command_of(argv: Sequence[str]) -> str | None:
    """The command a command line names (its first word past the top-level options), if any."""
    for word in argv:
        if word in ("-v", "--verbose"):
            continue
        return word if word in COMMANDS else None
    return None


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


def _check_common(args: argparse.Namespace) -> None:
    """Options several commands share, given but empty, or not a language code: refused
    instead of read as 'not given' (an empty --user would otherwise search as anonymous)."""
    for option, hint in (
        ("workspace", "give a folder, or leave it out for TRILHA_WORKSPACE or .trilha"),
        ("user", "give a user of the workspace's principals.yaml, or leave it out"),
    ):
        value = getattr(args, option, None)
        if isinstance(value, str) and not value.strip():
            raise BadRequestError(f"--{option} is empty; {hint}")
    lang = getattr(args, "lang", None)
    if isinstance(lang, str):  # as documents' codes are written: --lang PT finds 'pt'
        args.lang = written_code(lang)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``trilha`` command."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_of(argv))
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # named by the subcommand whose options they are not
        parser.command(args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
    # SIGTERM exits through SystemExit so embedded servers are stopped by their finalizers
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    _quiet_libraries(args.verbose)
    try:
        _check_common(args)
        return int(args.func(args))
    except MissingDependencyError as e:  # one line naming the extra and its pip install
        print(e, file=sys.stderr)
        return 2
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


#: Commands that only read: once they return, everything they opened is closed and nothing of
#: theirs is left to finish, so the process ends without the interpreter's teardown, which frees
#: every object one by one (the language and ONNX models: ~0.15 s of each such command).
ENDS_AT_ONCE = frozenset({"query", "ask", "context"})


def run() -> NoReturn:
    """The ``trilha`` console command: :func:`main`, then the exit (at once, output flushed,
    for the commands of :data:`ENDS_AT_ONCE`)."""
    code = main()
    if _command_of(sys.argv[1:]) in ENDS_AT_ONCE:
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
                stream.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
