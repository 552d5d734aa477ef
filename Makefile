# StudyStack: the two commands are `make run` and `make test`.
.PHONY: run stop test check bench bench-scale fuzz build clean-data

run:
	@scripts/run.sh

stop:
	@scripts/stop.sh

test:
	@scripts/test.sh

# The fast half of the tests: what needs no PostgreSQL cluster (minutes, not half an hour).
check:
	@scripts/check.sh

bench:
	@scripts/bench.sh

bench-scale:
	@scripts/bench_scale.sh

fuzz:
	@scripts/fuzz-parsers.sh

build:
	swift build --explicit-target-dependency-import-check error

clean-data:
	@scripts/clean-data.sh
