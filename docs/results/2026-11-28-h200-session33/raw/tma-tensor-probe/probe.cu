// How fast one block per SM streams a problem of decoding attention (rows of 64 bf16, 128 bytes,
// 4096 rows a problem, problems contiguous) into shared memory, three ways:
//   bulk1d: 1D bulk copies (cp.async.bulk), `stages` chunks of 128 rows in flight;
//   tensor: tensor-map bulk copies (cp.async.bulk.tensor.2d), the same chunks as 64 x 128 boxes;
//   regs:   16-byte register loads, four rows in flight a thread (blocks of 256 or 1024).
// Each block sums its problem's 32-bit words (wrapping), checked against the CPU.
// Build on the GPU machine: nvcc -O3 -std=c++17 -arch=sm_90 -o probe probe.cu -lcuda
// CHAINED=20 times 20 launches between one pair of events (session 34 ran it both ways).
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { CUresult rc_ = (x); if (rc_ != CUDA_SUCCESS) { const char* s; cuGetErrorString(rc_, &s); printf("%s: %s\n", #x, s); exit(1); } } while (0)
#define RK(x) do { cudaError_t rc_ = (x); if (rc_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(rc_)); exit(1); } } while (0)

constexpr int ROW_BYTES = 128;          // 64 bf16
constexpr int ROWS = 4096;              // a KV length
constexpr int CHUNK_ROWS = 128;         // a 16 KiB chunk; the tensor box is 64 x 128
constexpr int CHUNK = CHUNK_ROWS * ROW_BYTES;
constexpr int CHUNKS = ROWS / CHUNK_ROWS;
constexpr size_t PROBLEM = (size_t)ROWS * ROW_BYTES;
constexpr int THREADS = 256;
constexpr int MAX_STAGES = 13;

__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void bar_init(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar));
}
__device__ __forceinline__ void expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}
__device__ __forceinline__ void copy_1d(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void copy_tensor(uint32_t dst, const CUtensorMap* map, int col, int row, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :: "r"(dst), "l"((uint64_t)map), "r"(col), "r"(row), "r"(bar) : "memory");
}

// Thread 0 stores the block's sum of every thread's `acc` (wrapping) to out[blockIdx.x].
__device__ void store_block_sum(uint32_t acc, uint32_t* out) {
  __shared__ uint32_t red[1024];
  red[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) { uint32_t s = 0; for (int k = 0; k < (int)blockDim.x; k++) s += red[k]; out[blockIdx.x] = s; }
}

// Block b sums problem b through `stages` chunks in flight; TENSOR picks the copy.
template <bool TENSOR>
__global__ void __launch_bounds__(THREADS) stream_copies(const __grid_constant__ CUtensorMap map, const uint8_t* a,
                                                         int stages, uint32_t* out) {
  extern __shared__ __align__(128) uint8_t buf[];
  __shared__ __align__(8) uint64_t bars[MAX_STAGES];
  const int b = blockIdx.x, t = threadIdx.x;
  const uint8_t* src = a + (size_t)b * PROBLEM;
  auto issue = [&](int c) {
    int s = c % stages;
    uint32_t bar = smem(&bars[s]), dst = smem(buf + (size_t)s * CHUNK);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    expect(bar, CHUNK);
    if (TENSOR) copy_tensor(dst, &map, 0, b * ROWS + c * CHUNK_ROWS, bar);
    else copy_1d(dst, src + (size_t)c * CHUNK, CHUNK, bar);
  };
  if (t == 0) {
    for (int s = 0; s < stages; s++) bar_init(smem(&bars[s]));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int c = 0; c < stages && c < CHUNKS; c++) issue(c);
  }
  __syncthreads();
  uint32_t acc = 0;
  for (int c = 0; c < CHUNKS; c++) {
    int s = c % stages;
    wait(smem(&bars[s]), (c / stages) & 1);
    const uint4* chunk = reinterpret_cast<const uint4*>(buf + (size_t)s * CHUNK);
#pragma unroll
    for (int k = 0; k < CHUNK / 16 / THREADS; k++) {
      uint4 v = chunk[t + k * THREADS];
      acc += v.x + v.y + v.z + v.w;
    }
    __syncthreads();
    if (t == 0 && c + stages < CHUNKS) issue(c + stages);
  }
  store_block_sum(acc, out);
}

// Block b sums problem b with 16-byte register loads, four in flight a thread.
__global__ void stream_registers(const uint8_t* a, uint32_t* out) {
  const uint4* p = reinterpret_cast<const uint4*>(a + (size_t)blockIdx.x * PROBLEM);
  const int n = PROBLEM / 16, step = blockDim.x;
  uint32_t acc = 0;
  int i = threadIdx.x;
  for (; i + 3 * step < n; i += 4 * step) {
    uint4 v0 = __ldg(p + i), v1 = __ldg(p + i + step), v2 = __ldg(p + i + 2 * step), v3 = __ldg(p + i + 3 * step);
    acc += v0.x + v0.y + v0.z + v0.w + v1.x + v1.y + v1.z + v1.w + v2.x + v2.y + v2.z + v2.w + v3.x + v3.y + v3.z + v3.w;
  }
  for (; i < n; i += step) { uint4 v = __ldg(p + i); acc += v.x + v.y + v.z + v.w; }
  store_block_sum(acc, out);
}

int main() {
  RK(cudaFree(0));
  // CHAINED=k: k launches between one pair of events (as bin/bench's BENCH_TIMING=chained, k = 20).
  const int chained = getenv("CHAINED") ? std::max(1, atoi(getenv("CHAINED"))) : 1;
  cudaDeviceProp prop; RK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, %d MiB L2, %d launch(es) between events\n\n", prop.name, prop.multiProcessorCount,
         prop.l2CacheSize >> 20, chained);
  const int max_problems = prop.multiProcessorCount;
  const size_t bytes = PROBLEM * max_problems;
  const int nbuf = 4;  // 4 x 66 MiB rotated, past the L2
  std::vector<uint32_t> h(bytes / 4);
  for (size_t i = 0; i < h.size(); i++) h[i] = (uint32_t)(i * 2654435761u);
  std::vector<uint32_t> expect(max_problems, 0);
  for (int b = 0; b < max_problems; b++)
    for (size_t i = 0; i < PROBLEM / 4; i++) expect[b] += h[b * (PROBLEM / 4) + i];
  std::vector<uint8_t*> bufs(nbuf);
  std::vector<CUtensorMap> maps(nbuf);
  for (int k = 0; k < nbuf; k++) {
    RK(cudaMalloc(&bufs[k], bytes));
    RK(cudaMemcpy(bufs[k], h.data(), bytes, cudaMemcpyHostToDevice));
    cuuint64_t dims[2] = {ROW_BYTES / 2, (cuuint64_t)ROWS * max_problems};
    cuuint64_t strides[1] = {ROW_BYTES};
    cuuint32_t box[2] = {ROW_BYTES / 2, CHUNK_ROWS}, elem[2] = {1, 1};
    CK(cuTensorMapEncodeTiled(&maps[k], CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, bufs[k], dims, strides, box, elem,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  }
  uint32_t* out; RK(cudaMalloc(&out, max_problems * 4));
  RK(cudaFuncSetAttribute(stream_copies<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, MAX_STAGES * CHUNK));
  RK(cudaFuncSetAttribute(stream_copies<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, MAX_STAGES * CHUNK));
  cudaEvent_t e0, e1; RK(cudaEventCreate(&e0)); RK(cudaEventCreate(&e1));
  auto timeit = [&](auto launch) {
    for (int w = 0; w < 3; w++) launch(w);
    RK(cudaGetLastError()); RK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < 21; r++) {
      RK(cudaEventRecord(e0));
      for (int q = 0; q < chained; q++) launch(r * chained + q);
      RK(cudaEventRecord(e1)); RK(cudaEventSynchronize(e1));
      float ms; RK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms / chained);
    }
    RK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[10] * 1000.0;
  };
  auto poison = [&]() { RK(cudaMemset(out, 0xff, max_problems * 4)); };
  auto verify = [&](int problems) {
    std::vector<uint32_t> o(problems);
    RK(cudaMemcpy(o.data(), out, problems * 4, cudaMemcpyDeviceToHost));
    for (int b = 0; b < problems; b++) if (o[b] != expect[b]) return false;
    return true;
  };
  printf("| way | problems (blocks) | stages or threads | bytes in flight a block | median µs | GB/s | GB/s a block | sums |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (int problems : {32, 64, max_problems}) {
    double total = (double)PROBLEM * problems;
    for (int stages : {4, 8, 13}) {
      for (int tensor = 0; tensor < 2; tensor++) {
        size_t shared = (size_t)stages * CHUNK;
        poison();
        double us = timeit([&](int r) {
          if (tensor) stream_copies<true><<<problems, THREADS, shared>>>(maps[r % nbuf], bufs[r % nbuf], stages, out);
          else stream_copies<false><<<problems, THREADS, shared>>>(maps[r % nbuf], bufs[r % nbuf], stages, out);
        });
        bool ok = verify(problems);
        printf("| %s | %d | %d | %zu KiB | %.1f | %.0f | %.1f | %s |\n", tensor ? "tensor" : "bulk1d", problems, stages,
               shared >> 10, us, total / us / 1e3, total / us / 1e3 / problems, ok ? "ok" : "WRONG");
      }
    }
    for (int threads : {256, 1024}) {
      poison();
      double us = timeit([&](int r) { stream_registers<<<problems, threads>>>(bufs[r % nbuf], out); });
      bool ok = verify(problems);
      printf("| regs | %d | %d threads | %d KiB | %.1f | %.0f | %.1f | %s |\n", problems, threads, threads * 64 / 1024, us,
             total / us / 1e3, total / us / 1e3 / problems, ok ? "ok" : "WRONG");
    }
  }
  return 0;
}
