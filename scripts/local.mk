EXTRA_DIST += scripts/setup.sh scripts/test.sh scripts/run-fashion.sh
