# The two quickstart commands: `make demo` (the main job on the shipped examples) and `make test`.
# `make report` writes the examples' HTML and Markdown reports to build/; `make review` serves the examples' comparison
# for review; `make tour` shows the other commands.
# Each sets up its own virtual environment in .venv on first use: `make demo` and the other commands that run the
# tool install the runtime dependencies only; `make lint` and `make test` add the dev extras. Packages are installed
# with uv (put into .venv by pip first), which takes seconds where pip takes minutes; like pip, it compiles their
# bytecode as it installs them (else the first import of each, in every test process, would).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
RUNTIME := $(VENV)/.runtime
REVIEW := $(VENV)/.review
DEV := $(VENV)/.dev
PRODUCERS := .venv-producers
PHOENIX := .venv-phoenix
PRODUCED := tests/producers
EXAMPLE_EPOCH := 1795000000
LINTED := rag_compare tests benchmarks examples scripts
HANDMADE := tests/fixtures/handmade

.PHONY: demo report review screenshot tour test lint producers examples example-reviews handmade clean

# The runtime dependencies only, for the commands a newcomer runs first; for lint and tests the dev extras with them,
# in one resolver pass (so they are the runtime's too).
$(UV):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip uv

$(RUNTIME): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e .
	touch $(RUNTIME)

$(REVIEW): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[review]"
	touch $(RUNTIME) $(REVIEW)

$(DEV): pyproject.toml | $(UV)
	$(UV) pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[dev,ray,review]"
	touch $(RUNTIME) $(REVIEW) $(DEV)

demo: $(RUNTIME)
	$(BIN)/rag-compare runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv

# The examples' comparison as the reports a reviewer reads, in build/ (open build/report.html in a browser).
report: $(RUNTIME)
	mkdir -p build
	$(BIN)/rag-compare runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv \
		--format html --output build/report.html
	$(BIN)/rag-compare runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv \
		--format markdown --output build/report.md

# The examples' comparison served for review on 127.0.0.1, opened in a browser; verdicts go to build/reviews.sqlite.
# Ctrl-C stops the server.
review: $(REVIEW)
	mkdir -p build
	$(BIN)/rag-compare review runs/baseline.arrow runs/candidate.arrow --passages corpora/handbook_passages.csv \
		--db build/reviews.sqlite

# The README's picture of the review page (docs/images/review.png), taken in headless Chromium.
screenshot: $(DEV)
	$(BIN)/python scripts/review_screenshot.py

tour: $(RUNTIME)
	$(BIN)/rag-compare validate corpora/handbook.csv
	$(BIN)/rag-compare audit corpora/handbook_2025.csv corpora/handbook.csv
	$(BIN)/rag-compare show runs/baseline.arrow
	$(BIN)/rag-compare show runs/candidate.arrow

lint: $(DEV)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy rag_compare
	$(BIN)/lint-imports

# The real producers of the files import-run reads (LlamaIndex, LangChain, OpenInference, Ragas, DeepEval,
# LangSmith; promptfoo from npm; Phoenix apart, as its openai conflicts with ragas'), in environments of their own:
# their pins conflict with rag-compare's.
$(PRODUCERS)/.stamp: $(PRODUCED)/requirements.txt | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(PRODUCERS)
	$(UV) pip install --quiet --compile-bytecode --python $(PRODUCERS)/bin/python -r $(PRODUCED)/requirements.txt
	touch $@

$(PHOENIX)/.stamp: $(PRODUCED)/phoenix-requirements.txt | $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(PHOENIX)
	$(UV) pip install --quiet --compile-bytecode --python $(PHOENIX)/bin/python -r $(PRODUCED)/phoenix-requirements.txt
	touch $@

$(PRODUCED)/node_modules/.stamp: $(PRODUCED)/package.json
	if command -v npm >/dev/null; then cd $(PRODUCED) && npm install --no-audit --no-fund --silent --prefer-offline \
		&& touch node_modules/.stamp; fi

producers: $(PRODUCERS)/.stamp $(PHOENIX)/.stamp $(PRODUCED)/node_modules/.stamp

# The environments are made side by side (most of their time is spent waiting on downloads), lint beside them; then
# the tests run in two processes, each test file in one of them (its module fixtures made once), in the order of
# tests/conftest.py (the slowest files first).
test:
	$(MAKE) --jobs=4 lint producers
	$(BIN)/pytest --numprocesses=2 --dist=loadfile --no-loadscope-reorder

# Capture the example runs offline with examples/capture.py (BM25, a 600-character context budget, the extractive
# generator): the baseline is main's pipeline (top_k 3); the candidate retrieves 5, keeps stopwords, answers on weaker
# matches, ran on the corpus of its branch and met a simulated endpoint outage (examples/parts.py).
# SOURCE_DATE_EPOCH fixes their creation time; the latencies they record are measured anew.
examples: $(RUNTIME)
	rm -f runs/baseline.arrow runs/candidate.arrow runs/stopwords.arrow
	SOURCE_DATE_EPOCH=$(EXAMPLE_EPOCH) $(BIN)/python examples/capture.py runs

# The reviewer's verdicts on the example candidate's answers (examples/labels.csv), given through a review session and
# exported as runs/reviews.arrow: the human evaluator `rag-compare agreement` measures the offline judge against.
example-reviews: $(RUNTIME)
	rm -f runs/reviews.arrow
	SOURCE_DATE_EPOCH=$(EXAMPLE_EPOCH) $(BIN)/python examples/reviews.py runs/reviews.arrow

# Rebuild the hand-made test runs (every status, failures included) from their records; byte-stable.
handmade: $(RUNTIME)
	rm -f $(HANDMADE)/baseline.arrow $(HANDMADE)/candidate.arrow
	for name in baseline candidate; do \
		SOURCE_DATE_EPOCH=$(EXAMPLE_EPOCH) $(BIN)/rag-compare freeze $(HANDMADE)/records/$$name.jsonl \
			--corpus corpora/handbook.csv --config $(HANDMADE)/$$name.toml --output $(HANDMADE)/$$name.arrow || exit 2; \
	done

clean:
	rm -rf $(VENV) $(PRODUCERS) $(PHOENIX) $(PRODUCED)/node_modules .pytest_cache .mypy_cache .ruff_cache .hypothesis
