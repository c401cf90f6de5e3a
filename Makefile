# ktv — build, test, demo and benchmark entry points. See README.md.
SWIFT ?= swift
KTV_RELEASE := .build/release/ktv
DEMO_OUT := .build/demo
# Debian packages the build and the tests need: libsndfile (every audio format, MP3 included), FFTW,
# zlib (KRC), libsoxr (resampling), FFmpeg's libraries (MP4/M4A, WebM, video: what libsndfile does
# not decode), libzip (compressed MusicXML, .mxl); python3 (an independent zlib decoder in the KRC tests), lame (MP3 test input), sox (the
# split benchmark's peer), ffmpeg (M4A, WebM and MP4 test inputs).
APT_PACKAGES := libsndfile1-dev libfftw3-dev zlib1g-dev libsoxr-dev libavformat-dev libavcodec-dev libswresample-dev libavutil-dev libzip-dev \
  pkg-config python3 lame sox ffmpeg
# apt-get install as root, or through sudo; the packages follow, then `; }` closes the group.
APT_INSTALL = { if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends

.PHONY: bench-compare setup build release test browser-test interop-test install install-test tour-test dist dist-test demo spark-demo spark-cluster-demo spark-bench spark-test bench assess fuzz fuzz-smoke clean

## setup: install the Debian packages (as root, or with sudo) and build the release binary
setup:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(APT_INSTALL) $$missing; }; \
	else echo "apt packages present: $(APT_PACKAGES)"; fi
	$(SWIFT) build -c release --product ktv

build:
	$(SWIFT) build

release:
	$(SWIFT) build -c release --product ktv

## test: every unit, property, corpus (skipped without ../shared) and CLI end-to-end test
test:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

## browser-test: the HTML pages (ktv score --html, ktv batch report --html) in a real browser:
## Debian's chromium (apt, as root or with sudo) driven headless by Playwright for Python (PyPI, into
## .venv-browser), on generated takes, a 200-take batch, and ../shared's scenes and 七里香 when there.
## Skipped, with the reason, where the browser or Playwright cannot be installed. Screenshots in
## .build/browser/screenshots.
BROWSER_OUT := .build/browser
browser-test: release
	@command -v chromium >/dev/null 2>&1 || { echo "installing: chromium"; $(APT_INSTALL) chromium; } || true; }
	@# A CJK font, so the screenshots of 七里香 show its words rather than empty boxes (the checks do not need it).
	@fc-list :lang=zh 2>/dev/null | grep -q . || { echo "installing: fonts-wqy-zenhei"; $(APT_INSTALL) fonts-wqy-zenhei; } || true; }
	@if ! command -v chromium >/dev/null 2>&1; then echo "SKIP browser-test: no chromium, and apt could not install it"; exit 0; fi; \
	if ! .venv-browser/bin/python -c 'import playwright' 2>/dev/null; then \
	  rm -rf .venv-browser; \
	  { python3 -m venv .venv-browser 2>/dev/null || { $(APT_INSTALL) python3-venv; } && python3 -m venv .venv-browser; }; } && \
	  .venv-browser/bin/pip install -q playwright || { echo "SKIP browser-test: Playwright for Python could not be installed from PyPI"; exit 0; }; \
	fi; \
	.venv-browser/bin/python Tests/browser/pages_test.py --ktv $(KTV_RELEASE) --out $(BROWSER_OUT) --browser "$$(command -v chromium)"

## interop-test: ktv's outputs read by other projects' readers, from PyPI into .venv-interop: every
## lyric fixture (and ../shared's lyrics when there) as ASS (pysubs2: each line's \\k sums to its
## duration), WebVTT (webvtt-py) and TTML (ttconv: every line's and word's time, ±1 ms); the
## MusicXML fixtures read by music21 (its ties, transposition and tempo against ktv's), and ktv's
## written MusicXML read back by music21, with ../shared's scene references when there; every JSON ktv writes against its schema in docs/schema (jsonschema). Skipped, with the
## reason, where PyPI cannot be reached.
INTEROP_LYRICS := $(wildcard ../shared/lyrics/krc/*.krc ../shared/lyrics/lrc/*.lrc ../shared/lyrics/xml/*.xml ../shared/lyrics/yrc/* ../shared/lyrics/qrc/*)
INTEROP_EXTRA := $(wildcard ../shared/scenes/*/reference.xml ../shared/scenes/*/reference.notes.json ../shared/agora/LrcView-iOS/Tests/Resource/TestLogFile/xml/*.xml)
interop-test: release
	@if ! .venv-interop/bin/python -c 'import music21, pysubs2, webvtt, ttconv, jsonschema' 2>/dev/null; then \
	  rm -rf .venv-interop; \
	  { python3 -m venv .venv-interop 2>/dev/null || { $(APT_INSTALL) python3-venv; } && python3 -m venv .venv-interop; }; } && \
	  .venv-interop/bin/pip install -q music21 pysubs2 webvtt-py ttconv jsonschema || { echo "SKIP interop-test: music21, pysubs2, webvtt-py, ttconv or jsonschema could not be installed from PyPI"; exit 0; }; \
	fi; \
	.venv-interop/bin/python Tests/interop/interop_test.py --ktv $(KTV_RELEASE) --fixtures fixtures --extra $(INTEROP_EXTRA) \
	  --scenes $(wildcard ../shared/scenes/*) --extra-lyrics $(INTEROP_LYRICS)

## install: the release binary into $(PREFIX)/bin, a man page per command (generated from the
## command definitions by swift-argument-parser's generate-manual plugin, ending with each page's
## examples) into $(PREFIX)/share/man/man1 (`man ktv-score`), and completions for bash, zsh and fish.
## PREFIX defaults to /usr/local; DESTDIR is prepended for packaging.
PREFIX ?= /usr/local
MAN_OUT := .build/plugins/GenerateManual/outputs/ktv
install: release
	$(SWIFT) package plugin generate-manual --multi-page
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" \
	  "$(DESTDIR)$(PREFIX)/share/zsh/site-functions" "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"
	install -m 755 $(KTV_RELEASE) "$(DESTDIR)$(PREFIX)/bin/ktv"
	Tools/install-man.sh $(MAN_OUT) "$(DESTDIR)$(PREFIX)/share/man/man1" $(KTV_RELEASE)
	$(KTV_RELEASE) --generate-completion-script bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/ktv"
	$(KTV_RELEASE) --generate-completion-script zsh > "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_ktv"
	$(KTV_RELEASE) --generate-completion-script fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/ktv.fish"
	@echo "installed ktv, its man pages (man ktv, man ktv-score, …) and completions under $(DESTDIR)$(PREFIX)"

## install-test: `make install` into a scratch folder, then the man pages and completions checked
## (man ktv-score shows the scoring options and its examples; bash loads the completion).
install-test:
	@dir=$$(mktemp -d); $(MAKE) --no-print-directory install PREFIX=$$dir >/dev/null && \
	  MANWIDTH=100 man -M $$dir/share/man ktv-score | grep -q -- '--agora-offset' && \
	  MANWIDTH=100 man -M $$dir/share/man ktv-score | grep -q '^EXAMPLES' && \
	  MANWIDTH=100 man -M $$dir/share/man ktv-lyrics-validate | grep -q -- '--min-severity' && \
	  $$dir/bin/ktv --version >/dev/null && \
	  bash -c "source $$dir/share/bash-completion/completions/ktv && complete -p ktv" >/dev/null && \
	  grep -q "complete -c 'ktv'" $$dir/share/fish/vendor_completions.d/ktv.fish && grep -q '#compdef ktv' $$dir/share/zsh/site-functions/_ktv && \
	  echo "install-test: ktv, $$(ls $$dir/share/man/man1 | wc -l) man pages and 3 completions installed and checked under $$dir" && rm -rf $$dir || \
	  { echo "install-test FAILED (left in $$dir)"; exit 1; }

## dist: ktv with the Swift runtime linked statically, stripped, its man pages and a DEPENDENCIES
## file (the Debian packages it loads) in .build/dist/ktv-VERSION-linux-ARCH.tar.gz.
dist:
	Tools/dist.sh $(SWIFT)

## dist-test: the tarball unpacked and run as on a machine without Swift: `env -i`, a PATH of
## /usr/bin:/bin only, no Swift library in `ldd`, a fixture scored.
dist-test: dist
	@dir=$$(mktemp -d); tar -xzf .build/dist/ktv-*-linux-*.tar.gz -C $$dir && bin=$$(ls -d $$dir/ktv-*)/bin/ktv && \
	  ! ldd $$bin | grep -i swift && \
	  env -i PATH=/usr/bin:/bin $$bin score fixtures/audio/demo-dualmono.f0.csv --reference-audio fixtures/audio/demo-dualmono.flac \
	    --lyrics fixtures/audio/demo-dualmono.krc && \
	  env -i PATH=/usr/bin:/bin $$bin lyrics validate fixtures/lyrics/krc-encrypted.krc && \
	  echo "dist-test: $$(basename $$(ls -d $$dir/ktv-*)) runs with env -i and no Swift library" && rm -rf $$dir || \
	  { echo "dist-test FAILED (left in $$dir)"; exit 1; }

## tour-test: the README's five-minute tour run as written (every command must work; exits 1 and 65
## are findings the tour shows on purpose).
tour-test: release
	python3 Tests/tour/readme_tour.py

## demo: run the tools on fixtures/ and print what they found
demo: release
	@echo "== ktv lyrics validate fixtures/lyrics (findings expected: the folder holds broken files on purpose)"
	@# Exits 1 (errors) and 65 (unreadable files) are the verdict on the broken fixtures, said in words
	@# rather than as make's "Error 1 (ignored)"; anything else (74: a file) stops the demo.
	@mkdir -p $(DEMO_OUT); $(KTV_RELEASE) lyrics validate fixtures/lyrics > $(DEMO_OUT)/validate.txt; status=$$?; tail -n 25 $(DEMO_OUT)/validate.txt; \
	  case $$status in 1|65) echo "(ktv lyrics validate exited $$status: errors found, and 65 says a file could not be read as lyrics at all, as the broken fixtures should give)";; \
	  0) ;; *) exit $$status;; esac
	@echo
	@echo "== ktv lyrics parse fixtures/lyrics/krc-language.krc --format text"
	@$(KTV_RELEASE) lyrics parse fixtures/lyrics/krc-language.krc --format text
	@echo
	@echo "== ktv lyrics convert fixtures/lyrics/krc-encrypted.krc --to elrc"
	@$(KTV_RELEASE) lyrics convert fixtures/lyrics/krc-encrypted.krc --to elrc
	@echo
	@echo "== ktv split fixtures/audio/demo-dualmono.flac --vocals --out-dir $(DEMO_OUT)/split"
	@mkdir -p $(DEMO_OUT)
	@$(KTV_RELEASE) split fixtures/audio/demo-dualmono.flac --vocals --out-dir $(DEMO_OUT)/split
	@cat $(DEMO_OUT)/split/split.json
	@echo
	@echo "== ktv pitch $(DEMO_OUT)/split/vocals.wav, then ktv pitch eval against the track's true f0"
	@$(KTV_RELEASE) pitch $(DEMO_OUT)/split/vocals.wav -o $(DEMO_OUT)/vocals.f0.csv
	@sed -n '1p;150,155p' $(DEMO_OUT)/vocals.f0.csv
	@$(KTV_RELEASE) pitch eval fixtures/audio/demo-dualmono.f0.csv $(DEMO_OUT)/vocals.f0.csv
	@echo
	@echo "== ktv score $(DEMO_OUT)/split/vocals.wav against the track's own vocal, with its page and picture"
	@$(KTV_RELEASE) score $(DEMO_OUT)/split/vocals.wav --reference-audio fixtures/audio/demo-dualmono.flac \
	  --lyrics fixtures/audio/demo-dualmono.krc --html $(DEMO_OUT)/score.html --svg $(DEMO_OUT)/score.svg
	@echo "wrote $(DEMO_OUT)/score.svg (one panel per judged line)"
	@echo
	@echo "== ktv lyrics validate fixtures/audio/demo-dualmono.krc --audio fixtures/audio/demo-dualmono.flac"
	@$(KTV_RELEASE) lyrics validate fixtures/audio/demo-dualmono.krc --audio fixtures/audio/demo-dualmono.flac
	@echo
	@echo "== ktv replay fixtures/replay/demo.jsonl --svg $(DEMO_OUT)/replay-drift.svg (findings expected: the room has injected faults)"
	@# Exit 1 is the verdict (decisions not ok), said in words here rather than as make's "Error 1 (ignored)";
	@# anything else (65: a bad log, 74: a file) stops the demo.
	@$(KTV_RELEASE) replay fixtures/replay/demo.jsonl --svg $(DEMO_OUT)/replay-drift.svg --csv $(DEMO_OUT)/replay-drift.csv; \
	  status=$$?; if [ $$status -eq 1 ]; then echo "(ktv replay exited 1: decisions not ok, as the injected faults should make them)"; \
	  elif [ $$status -ne 0 ]; then exit $$status; fi
	@echo "wrote $(DEMO_OUT)/replay-drift.svg (drift per singer, seeks colored by verdict) and $(DEMO_OUT)/replay-drift.csv"

## spark-demo: score generated takes on Apache Spark (local mode): Java 17 from apt if `java` is
## missing (as root, or with sudo), PySpark from PyPI into .venv-spark, each partition's manifest rows
## through one `ktv batch - -o -` process whose exit status counts, results in Parquet, then a report
## (examples/spark/README.md). KTV_RELEASE=/path/to/ktv uses that binary instead of building one;
## SPARK_TAKES (200) and SPARK_PARTITIONS (4) size the run.
SPARK_TAKES ?= 200
SPARK_PARTITIONS ?= 4
SPARK_OUT := .build/spark-demo
PYSPARK_VERSION := 3.5.*
# Java and PySpark, for every Spark target.
define SPARK_SETUP
	@command -v java >/dev/null 2>&1 || { echo "installing: openjdk-17-jre-headless"; \
	  $(APT_INSTALL) openjdk-17-jre-headless; }; }
	@java -version 2>&1 | head -n 1
	@# Debian's own python3 needs python3-venv for `python3 -m venv`: installed when the first try fails.
	@if .venv-spark/bin/python -c 'import pyspark' 2>/dev/null; then :; else \
	  echo "installing pyspark==$(PYSPARK_VERSION) into .venv-spark"; rm -rf .venv-spark; \
	  { python3 -m venv .venv-spark || { echo "installing: python3-venv"; rm -rf .venv-spark; \
	    $(APT_INSTALL) python3-venv; } && python3 -m venv .venv-spark; }; } && \
	  .venv-spark/bin/pip install -q 'pyspark==$(PYSPARK_VERSION)'; \
	fi
	@.venv-spark/bin/python -c 'import pyspark, sys; print("pyspark", pyspark.__version__, "on Python", sys.version.split()[0])'
endef
spark-demo:
	$(SPARK_SETUP)
	@if [ "$(KTV_RELEASE)" = ".build/release/ktv" ]; then $(SWIFT) build -c release --product ktv; \
	else echo "using $(KTV_RELEASE) (not building)"; fi
	@rm -rf $(SPARK_OUT) && mkdir -p $(SPARK_OUT)
	python3 examples/spark/make_takes.py $(SPARK_OUT) --takes $(SPARK_TAKES)
	.venv-spark/bin/python examples/spark/score_with_spark.py --ktv $(abspath $(KTV_RELEASE)) \
	  --manifest $(SPARK_OUT)/manifest.jsonl --out $(SPARK_OUT)/results.parquet --partitions $(SPARK_PARTITIONS)

## spark-cluster-demo: a Spark standalone master and two one-core workers on 127.0.0.1, each its own
## JVM, score SPARK_CLUSTER_TAKES (200) generated 30-second audio takes with accompaniment plus 4 bad
## rows, with `make dist`'s tarball shipped to the executors (spark.archives), while SPARK_FAULTS
## (worker,ktv; or worker, ktv, none) are injected: a worker and a ktv process killed with SIGKILL
## mid-job. Passes when every id is there exactly once and every result equals plain `ktv batch`'s.
SPARK_CLUSTER_TAKES ?= 200
SPARK_FAULTS ?= worker,ktv
SPARK_CLUSTER_OUT := .build/spark-cluster
DIST_TARBALL = $(firstword $(wildcard .build/dist/ktv-*-linux-*.tar.gz))
spark-cluster-demo: dist
	$(SPARK_SETUP)
	$(SWIFT) build -c release --product ktv-bench
	@rm -rf $(SPARK_CLUSTER_OUT) && mkdir -p $(SPARK_CLUSTER_OUT)
	.build/release/ktv-bench make-takes $(SPARK_CLUSTER_OUT)/input --takes $(SPARK_CLUSTER_TAKES)
	.venv-spark/bin/python examples/spark/cluster_demo.py --dist $(DIST_TARBALL) --faults $(SPARK_FAULTS) \
	  --manifest $(SPARK_CLUSTER_OUT)/input/manifest.jsonl --out $(SPARK_CLUSTER_OUT)/run

## spark-bench: the same 200 audio takes scored four ways, in one run: plain `ktv batch --jobs 2`,
## Spark local[2], the two-worker cluster without faults and with both; wall time, takes per minute
## and Spark's overhead per task for each (examples/spark/bench.py).
spark-bench: dist
	$(SPARK_SETUP)
	$(SWIFT) build -c release --product ktv-bench
	@rm -rf .build/spark-bench && mkdir -p .build/spark-bench
	.build/release/ktv-bench make-takes .build/spark-bench/input --takes 200
	.venv-spark/bin/python examples/spark/bench.py --dist $(DIST_TARBALL) \
	  --manifest .build/spark-bench/input/manifest.jsonl --out .build/spark-bench

## spark-test: the Spark tests (Tests/KTVCLITests/SparkTests.swift): local mode on 40 pitch-track takes,
## and the fault-injected two-worker cluster on 36 audio takes; `make test` skips them.
spark-test:
	$(SPARK_SETUP)
	$(SWIFT) build --build-tests
	KTV_SPARK_TESTS=1 $(SWIFT) test --skip-build --filter Spark

## bench-compare: every `make bench` figure for this tree's ktv and a revision's (make bench-compare
## BASE=79d4523), the two run in turn RUNS times each (default 5): medians, the ratio, and a flag on
## any ratio above 1.05. BASE's ktv is built once, in a worktree under .build/bench-base/, and kept.
RUNS ?= 5
bench-compare:
	@[ -n "$(BASE)" ] || { echo "usage: make bench-compare BASE=<revision> [RUNS=5]"; exit 64; }
	$(SWIFT) build -c release --product ktv
	$(SWIFT) build -c release --product ktv-bench
	@base=$$(Tools/build-revision.sh $(SWIFT) $(BASE)) && \
	  head=$$(git rev-parse --short HEAD)$$(git diff --quiet HEAD -- Sources Package.swift || echo +changes) && \
	  .build/release/ktv-bench compare --base $$base --ktv $(KTV_RELEASE) --runs $(RUNS) --base-name $(BASE) --head-name $$head

## bench: performance targets (release build)
bench:
	$(SWIFT) build -c release --product ktv
	$(SWIFT) build -c release --product ktv-bench
	.build/release/ktv-bench lyrics-validate --files 10000 --ktv $(KTV_RELEASE)
	.build/release/ktv-bench split --minutes 10 --long-minutes 60 --ktv $(KTV_RELEASE)
	.build/release/ktv-bench replay --hours 3 --ktv $(KTV_RELEASE)
	.build/release/ktv-bench score --takes 1000 --audio-takes 20 --ktv $(KTV_RELEASE)
	.build/release/ktv-bench batch --takes 200 --ktv $(KTV_RELEASE)
	.build/release/ktv-bench sync --minutes 4 --ktv $(KTV_RELEASE)
	.build/release/ktv-bench assess
	.build/release/ktv-bench assess-experts
	@# Python peers (aubio, librosa) from PyPI into a virtualenv; the bench runs without them if this fails.
	@# aubio is built without FFmpeg (PKG_CONFIG_LIBDIR): its FFmpeg reader predates FFmpeg 5, and the peer reads WAV through soundfile.
	-@[ -x .venv-bench/bin/python ] && .venv-bench/bin/python -c "import aubio" 2>/dev/null || (python3 -m venv .venv-bench && PKG_CONFIG_LIBDIR=/nonexistent .venv-bench/bin/pip install -q numpy soundfile librosa aubio)
	.build/release/ktv-bench pitch --minutes 10 --long-minutes 60 --ktv $(KTV_RELEASE) --python .venv-bench/bin/python

## assess: how ktv's scores rank real sung performances against a jury (MASTmelody in
## ../shared/assess/mast) and agree with music experts dimension by dimension (PESnQ-DS in
## ../shared/assess/pesnq); one line each and exit 0 when the data is absent
assess:
	$(SWIFT) build -c release --product ktv-bench
	.build/release/ktv-bench assess
	.build/release/ktv-bench assess-experts

## fuzz: coverage-guided fuzzing (libFuzzer + AddressSanitizer) of every reader, FUZZ_SECONDS (60) per
## harness; a separate package (Fuzz/) built into .build-fuzz/. Exit 1 if any harness crashed.
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) SWIFT=$(SWIFT) Fuzz/fuzz.sh

## fuzz-smoke: every harness builds and runs its seeds, then a few seconds of fuzzing (CI). A fixed
## libFuzzer seed makes the mutations the same every run, so CI checks the harnesses, not its luck;
## finding new bugs is `make fuzz`'s job.
fuzz-smoke:
	FUZZ_SECONDS=3 FUZZ_SMOKE=1 FUZZ_ARGS="-seed=1 $(FUZZ_ARGS)" SWIFT=$(SWIFT) Fuzz/fuzz.sh

clean:
	rm -rf .build .build-fuzz
