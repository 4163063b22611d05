# gpu.sh - CUDA processes (src/kinds/cuda.c): the GPU tests of
# tests/gpu/run.sh, through `make test-gpu`, where there is an NVIDIA GPU
# and nvcc.  Elsewhere skipped, saying so.
t gpu                      needs gpu  timeout 900

test_gpu() {
	step "make test-gpu"
	make -s -C "$ROOT" test-gpu
}
