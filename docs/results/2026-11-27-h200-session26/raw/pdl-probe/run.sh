set -e
cd "$(dirname "$0")"
/usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_90 -o pdl_probe pdl_probe.cu
./pdl_probe | tee $OUT/pdl.md
