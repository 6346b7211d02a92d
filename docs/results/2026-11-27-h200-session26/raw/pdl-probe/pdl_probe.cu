// Per-call time of back-to-back launches: plain, PDL (griddepcontrol.wait first), PDL + early trigger.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); exit(1);} } while (0)

template <int MODE>
__global__ void __launch_bounds__(256) sum_rows(const float4* __restrict__ a, float* __restrict__ y, long n4_per_block) {
  if (MODE >= 1) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (MODE == 2) asm volatile("griddepcontrol.launch_dependents;");
  const float4* p = a + blockIdx.x * n4_per_block;
  float s = 0.f;
  for (long i = threadIdx.x; i < n4_per_block; i += 256) { float4 v = __ldg(p + i); s += v.x + v.y + v.z + v.w; }
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  __shared__ float w[8];
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < 8; i++) t += w[i]; y[blockIdx.x] = t; }
}

template <int MODE>
float time_calls(const float4* a, float* y, int blocks, long per, int pdl, int calls) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(256); cfg.stream = 0;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr; cfg.numAttrs = pdl ? 1 : 0;
  for (int i = 0; i < 20; i++) CK(cudaLaunchKernelEx(&cfg, sum_rows<MODE>, a, y, per));
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  std::vector<float> ts;
  for (int r = 0; r < 15; r++) {
    cudaEventRecord(s);
    for (int i = 0; i < calls; i++) CK(cudaLaunchKernelEx(&cfg, sum_rows<MODE>, a, y, per));
    cudaEventRecord(e); CK(cudaEventSynchronize(e));
    float ms; cudaEventElapsedTime(&ms, s, e); ts.push_back(ms * 1000.f / calls);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

int main() {
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); printf("%s\n", p.name);
  long max_bytes = 64l << 20;
  float4* a; float* y; CK(cudaMalloc(&a, max_bytes)); CK(cudaMalloc(&y, 1 << 20));
  CK(cudaMemset(a, 0, max_bytes));
  printf("| bytes | blocks | plain µs | PDL wait µs | PDL wait+trigger µs | PDL no-attr-mode2 |\n|---|---|---|---|---|---|\n");
  long sizes[] = {64l << 10, 1l << 20, 4l << 20, 16l << 20, 32l << 20, 64l << 20};
  for (long bytes : sizes) {
    int blocks = bytes >= (4l << 20) ? 528 : 132;
    long per = bytes / 16 / blocks;
    float t0 = time_calls<0>(a, y, blocks, per, 0, 200);
    float t1 = time_calls<1>(a, y, blocks, per, 1, 200);
    float t2 = time_calls<2>(a, y, blocks, per, 1, 200);
    float t3 = time_calls<2>(a, y, blocks, per, 0, 200);
    float t0b = time_calls<0>(a, y, blocks, per, 0, 200);
    printf("| %ld | %d | %.2f / %.2f | %.2f | %.2f | %.2f |\n", bytes, blocks, t0, t0b, t1, t2, t3);
  }
  return 0;
}
