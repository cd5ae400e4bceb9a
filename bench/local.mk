# bench/: benchmark programs (none yet: speed work starts with training).
EXTRA_DIST += bench/RESULTS.md
