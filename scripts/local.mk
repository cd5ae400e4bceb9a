EXTRA_DIST += scripts/setup.sh scripts/test.sh scripts/run-fashion.sh scripts/elastic.sh scripts/cluster.sh \
	scripts/slurm-cluster.sh scripts/slurm-train.sbatch scripts/plot-run.sh

# Fashion-MNIST (IDX) -> CTF converter, used by scripts/prepare-fashion-mnist.sh
noinst_PROGRAMS += scripts/idx2ctf
scripts_idx2ctf_SOURCES = scripts/idx2ctf.c
EXTRA_DIST += scripts/prepare-fashion-mnist.sh scripts/fuzz.sh scripts/gen-man.sh \
	scripts/device-bundle.sh scripts/gpu-check.sh
