// Zero-fill of 512 MiB (2^26 u64 indices) and 256 MiB, ways against the driver memsets, on the
// GPU machine: nvcc -O3 -std=c++17 -arch=sm_90 -o fill_probe fill_probe.cu -lcuda && ./fill_probe
// Each way: 3 warm-ups, then 41 repetitions with their own events, the host not waiting between
// them (as bin/bench and torch_peers.py time); the median. Rounds rotate the order of the ways.
// Every way's buffer is checked to be all zeros after it (poisoned with 0xff before).
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define RK(x) do { cudaError_t rc_ = (x); if (rc_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(rc_)); exit(1); } } while (0)
#define CK(x) do { CUresult rc_ = (x); if (rc_ != CUDA_SUCCESS) { printf("%s failed: %d\n", #x, (int)rc_); exit(1); } } while (0)

// K 16-byte stores a thread, `SPREAD`: strided by the block (each store coalesced across the
// block), else adjacent in the thread. CS: st.global.cs (evict-first).
template <int K, bool SPREAD, bool CS>
__global__ void fill(uint4* p, size_t nvec) {
  size_t base = (size_t)blockIdx.x * blockDim.x * K;
#pragma unroll
  for (int k = 0; k < K; k++) {
    size_t i = SPREAD ? base + k * blockDim.x + threadIdx.x : base + (size_t)threadIdx.x * K + k;
    if (i < nvec) {
      if (CS) asm volatile("st.global.cs.v4.u32 [%0], {%1,%1,%1,%1};" :: "l"(p + i), "r"(0) : "memory");
      else p[i] = make_uint4(0, 0, 0, 0);
    }
  }
}

// Grid-stride, `blocks_per_sm` blocks of 256 a SM, four 16-byte stores in flight a thread.
__global__ void fill_stride(uint4* p, size_t nvec) {
  size_t step = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * step < nvec; i += 4 * step) {
    p[i] = make_uint4(0, 0, 0, 0); p[i + step] = make_uint4(0, 0, 0, 0);
    p[i + 2 * step] = make_uint4(0, 0, 0, 0); p[i + 3 * step] = make_uint4(0, 0, 0, 0);
  }
  for (; i < nvec; i += step) p[i] = make_uint4(0, 0, 0, 0);
}

struct Way { std::string name; std::function<void(uint4*, size_t)> run; };

int main() {
  RK(cudaFree(0));
  cudaDeviceProp prop; RK(cudaGetDeviceProperties(&prop, 0));
  int drv; RK(cudaDriverGetVersion(&drv));
  printf("# %s, %d SMs, driver API %d\n\n", prop.name, prop.multiProcessorCount, drv);
  const int sms = prop.multiProcessorCount;
  std::vector<Way> ways;
  ways.push_back({"cuMemsetD32Async", [](uint4* p, size_t b) { CK(cuMemsetD32Async((CUdeviceptr)p, 0, b / 4, 0)); }});
  ways.push_back({"cuMemsetD8Async", [](uint4* p, size_t b) { CK(cuMemsetD8Async((CUdeviceptr)p, 0, b, 0)); }});
  auto add = [&](const char* name, auto kern, int threads, int per_thread) {
    ways.push_back({name, [=](uint4* p, size_t b) {
      size_t nvec = b / 16, per_block = (size_t)threads * per_thread;
      kern<<<(unsigned)((nvec + per_block - 1) / per_block), threads>>>(p, nvec);
    }});
  };
  add("v4 x1, 128 threads", fill<1, true, false>, 128, 1);
  add("v4 x1, 256 threads", fill<1, true, false>, 256, 1);
  add("v4 x1, 512 threads", fill<1, true, false>, 512, 1);
  add("v4 x1, 1024 threads", fill<1, true, false>, 1024, 1);
  add("v4 x1 .cs, 256 threads", fill<1, true, true>, 256, 1);
  add("v4 x2 spread, 128 threads", fill<2, true, false>, 128, 2);
  add("v4 x2 spread, 256 threads", fill<2, true, false>, 256, 2);
  add("v4 x2 adjacent, 128 threads", fill<2, false, false>, 128, 2);
  add("v4 x4 spread, 256 threads", fill<4, true, false>, 256, 4);
  add("v4 x4 adjacent, 128 threads", fill<4, false, false>, 128, 4);
  add("v4 x8 spread, 256 threads", fill<8, true, false>, 256, 8);
  for (int bps : {4, 8, 16}) {
    char* name = new char[64];
    snprintf(name, 64, "grid-stride x4, %d blocks of 256 a SM", bps);
    ways.push_back({name, [=](uint4* p, size_t b) { fill_stride<<<sms * bps, 256>>>(p, b / 16); }});
  }
  cudaEvent_t e0[41], e1[41];
  for (int r = 0; r < 41; r++) { RK(cudaEventCreate(&e0[r])); RK(cudaEventCreate(&e1[r])); }
  const size_t max_bytes = (size_t)1 << 29;
  uint4* buf; RK(cudaMalloc(&buf, max_bytes));
  std::vector<uint64_t> host(max_bytes / 8);
  for (size_t bytes : {max_bytes, max_bytes / 2}) {
    std::vector<std::vector<double>> us(ways.size());
    for (int round = 0; round < 3; round++) {
      for (size_t w0 = 0; w0 < ways.size(); w0++) {
        size_t w = (w0 + round * 5) % ways.size();
        RK(cudaMemset(buf, 0xff, bytes));
        for (int i = 0; i < 3; i++) ways[w].run(buf, bytes);
        RK(cudaGetLastError()); RK(cudaDeviceSynchronize());
        for (int r = 0; r < 41; r++) { RK(cudaEventRecord(e0[r])); ways[w].run(buf, bytes); RK(cudaEventRecord(e1[r])); }
        RK(cudaGetLastError()); RK(cudaDeviceSynchronize());
        std::vector<float> t(41);
        for (int r = 0; r < 41; r++) RK(cudaEventElapsedTime(&t[r], e0[r], e1[r]));
        std::sort(t.begin(), t.end());
        us[w].push_back(t[20] * 1000.0);
        RK(cudaMemset(buf, 0xff, bytes));
        ways[w].run(buf, bytes);
        RK(cudaMemcpy(host.data(), buf, bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < bytes / 8; i++)
          if (host[i] != 0) { printf("%s: element %zu not zero\n", ways[w].name.c_str(), i); exit(1); }
      }
    }
    printf("\n### %zu MiB\n\n| way | round 1 µs | round 2 | round 3 | best | GB/s (best) |\n|---|---|---|---|---|---|\n", bytes >> 20);
    for (size_t w = 0; w < ways.size(); w++) {
      double best = *std::min_element(us[w].begin(), us[w].end());
      printf("| %s | %.1f | %.1f | %.1f | %.1f | %.0f |\n", ways[w].name.c_str(), us[w][0], us[w][1], us[w][2], best,
             bytes / best / 1e3);
    }
  }
  printf("\nall fills checked: zeros\n");
  return 0;
}
