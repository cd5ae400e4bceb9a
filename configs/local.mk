# configs
