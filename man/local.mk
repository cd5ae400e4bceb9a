# man/: trainer(1) and trainer.cfg(5); the key reference of the latter is generated from
# the schema tables by scripts/gen-man.sh and checked by tests/test_man.sh.
dist_man_MANS = man/trainer.1 man/trainer.cfg.5
EXTRA_DIST += man/trainer.cfg.5.in scripts/gen-man.sh
