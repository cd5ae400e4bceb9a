# configs/: example configs users copy from.
configsdir = $(pkgdatadir)/configs
dist_configs_DATA = configs/fashion-mlp.cfg configs/fashion-mlp-dp.cfg configs/fashion-mlp-bmuf.cfg \
	configs/fashion-mlp-ma.cfg configs/fashion-mlp-asgd.cfg configs/fashion-lstm.cfg \
	configs/fashion-mlp-bs.cfg configs/fashion-lstm-bs.cfg configs/fashion-conv-bs.cfg
