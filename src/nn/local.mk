# src/nn/ and src/math/ (network layers, parameter arena, compute backend): built into
# libptnn.a. This fragment is owned by the nn/math work.
