# The two quickstart commands: `make demo` (the main job on the shipped examples) and `make test`.
# `make report` writes the examples' HTML and Markdown reports to build/; `make tour` shows the other commands.
# Each sets up its own virtual environment in .venv on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLE_EPOCH := 1795000000
LINTED := rag_compare tests benchmarks
HANDMADE := tests/fixtures/handmade

.PHONY: demo report tour test lint examples handmade clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rag-compare runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv

# The examples' comparison as the reports a reviewer reads, in build/ (open build/report.html in a browser).
report: $(STAMP)
	mkdir -p build
	$(BIN)/rag-compare runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv \
		--format html --output build/report.html
	$(BIN)/rag-compare runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv \
		--format markdown --output build/report.md

tour: $(STAMP)
	$(BIN)/rag-compare validate corpora/handbook.csv
	$(BIN)/rag-compare audit corpora/handbook_2025.csv corpora/handbook.csv
	$(BIN)/rag-compare show runs/baseline.arrow
	$(BIN)/rag-compare show runs/candidate.arrow

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy rag_compare

test: lint
	$(BIN)/pytest

# Capture the example runs from the example corpus, offline: BM25 and the extractive generator, top_k 3 and 5.
# SOURCE_DATE_EPOCH fixes their creation time; the latencies they record are measured anew.
examples: $(STAMP)
	rm -f runs/baseline.arrow runs/candidate.arrow
	SOURCE_DATE_EPOCH=$(EXAMPLE_EPOCH) $(BIN)/rag-compare capture corpora/handbook.csv \
		--passages corpora/handbook_passages.csv --top-k 3 --context-budget 600 --set name=baseline \
		--output runs/baseline.arrow
	SOURCE_DATE_EPOCH=$(EXAMPLE_EPOCH) $(BIN)/rag-compare capture corpora/handbook.csv \
		--passages corpora/handbook_passages.csv --top-k 5 --context-budget 600 --set name=candidate \
		--output runs/candidate.arrow

# Rebuild the hand-made test runs (every status, failures included) from their records; byte-stable.
handmade: $(STAMP)
	rm -f $(HANDMADE)/baseline.arrow $(HANDMADE)/candidate.arrow
	for name in baseline candidate; do \
		SOURCE_DATE_EPOCH=$(EXAMPLE_EPOCH) $(BIN)/rag-compare freeze $(HANDMADE)/records/$$name.jsonl \
			--corpus corpora/handbook.csv --config $(HANDMADE)/$$name.toml --output $(HANDMADE)/$$name.arrow || exit 2; \
	done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
