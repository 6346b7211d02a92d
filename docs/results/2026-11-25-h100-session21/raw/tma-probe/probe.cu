// Bulk-copy (TMA 1D) streaming sum from Rust-built sm_90 cubin vs a float4 register-load sum.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { CUresult rc_ = (x); if (rc_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(rc_, &s); printf("%s: %s\n", #x, s); exit(1);} } while (0)
#define RK(x) do { cudaError_t rc_ = (x); if (rc_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(rc_)); exit(1);} } while (0)
__global__ void reg_sum(const float4* __restrict__ p, size_t n4, float* out) {
  float acc = 0; size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;
  for (; i + 3 * step < n4; i += 4 * step) {
    float4 a = __ldg(p + i), b = __ldg(p + i + step), c = __ldg(p + i + 2 * step), d = __ldg(p + i + 3 * step);
    acc += a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w + c.x + c.y + c.z + c.w + d.x + d.y + d.z + d.w;
  }
  for (; i < n4; i += step) { float4 a = __ldg(p + i); acc += a.x + a.y + a.z + a.w; }
  __shared__ float red[256]; red[threadIdx.x] = acc; __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int k = 0; k < 256; k++) t += red[k]; out[blockIdx.x] = t; }
}
int main(int argc, char** argv) {
  RK(cudaFree(0));
  CUmodule mod; CK(cuModuleLoad(&mod, argv[1]));
  CUfunction probe, stream; CK(cuModuleGetFunction(&probe, mod, "tma_probe")); CK(cuModuleGetFunction(&stream, mod, "tma_stream_sum"));
  cudaDeviceProp prop; RK(cudaGetDeviceProperties(&prop, 0)); printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  // correctness of one bulk copy
  { std::vector<unsigned> h(1024); for (int i = 0; i < 1024; i++) h[i] = i * 7 + 3;
    unsigned *src, *dst; RK(cudaMalloc(&src, 4096)); RK(cudaMalloc(&dst, 4096)); RK(cudaMemcpy(src, h.data(), 4096, cudaMemcpyHostToDevice)); RK(cudaMemset(dst, 0xa5, 4096));
    void* args[] = {&src, &dst}; CK(cuLaunchKernel(probe, 1, 1, 1, 1024, 1, 1, 0, 0, args, 0)); RK(cudaDeviceSynchronize());
    std::vector<unsigned> g(1024); RK(cudaMemcpy(g.data(), dst, 4096, cudaMemcpyDeviceToHost));
    int bad = 0; for (int i = 0; i < 1024; i++) bad += g[i] != h[i] + 1; printf("tma_probe: %d of 1024 wrong\n", bad); }
  const size_t CHUNK = 2048 * 4; int sms = prop.multiProcessorCount;
  for (size_t mb : {32, 117, 256}) {
    size_t bytes = mb << 20; bytes = bytes / CHUNK * CHUNK; size_t words = bytes / 4, chunks = bytes / CHUNK;
    int nbuf = bytes < (200u << 20) ? (int)((200u << 20) / bytes + 1) : 1;
    std::vector<float*> bufs(nbuf); std::vector<float> h(words); double expect = 0;
    for (size_t i = 0; i < words; i++) { h[i] = (float)((i * 2654435761u >> 7) % 5); expect += h[i]; }
    for (auto& b : bufs) { RK(cudaMalloc(&b, bytes)); RK(cudaMemcpy(b, h.data(), bytes, cudaMemcpyHostToDevice)); }
    float* out; RK(cudaMalloc(&out, 4096 * 4)); float *cp; RK(cudaMalloc(&cp, bytes));
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    auto timeit = [&](auto f) { for (int w = 0; w < 3; w++) f(w); RK(cudaDeviceSynchronize()); std::vector<float> t;
      for (int r = 0; r < 21; r++) { cudaEventRecord(e0); f(r); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms); }
      std::sort(t.begin(), t.end()); return t[10] * 1000; };
    auto check = [&](int grid) { std::vector<float> o(grid); RK(cudaMemcpy(o.data(), out, grid * 4, cudaMemcpyDeviceToHost)); double s = 0; for (float v : o) s += v; return s == expect; };
    double copy = timeit([&](int r) { RK(cudaMemcpyAsync(cp, bufs[r % nbuf], bytes, cudaMemcpyDeviceToDevice)); });
    printf("%zu MiB (%d buffers rotated): copy %.1f us (%.0f GB/s read+write)\n", mb, nbuf, copy, 2 * bytes / copy / 1e3);
    for (int per : {1, 2, 4, 6}) { int grid = sms * per;
      double t = timeit([&](int r) { const float* p = bufs[r % nbuf]; void* a[] = {(void*)&p, (void*)&chunks, (void*)&out}; CK(cuLaunchKernel(stream, grid, 1, 1, 256, 1, 1, 0, 0, a, 0)); });
      bool ok = check(grid);
      double u = timeit([&](int r) { reg_sum<<<grid, 256>>>((const float4*)bufs[r % nbuf], words / 4, out); });
      bool ok2 = check(grid);
      printf("  grid %d: bulk %.1f us %.0f GB/s %s | float4 x4 %.1f us %.0f GB/s %s\n", grid, t, bytes / t / 1e3, ok ? "ok" : "WRONG", u, bytes / u / 1e3, ok2 ? "ok" : "WRONG"); }
    for (auto b : bufs) cudaFree(b); cudaFree(out); cudaFree(cp);
  }
  return 0;
}
