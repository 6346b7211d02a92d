// Fill of zeros for 2^26 indices (u64: 512 MiB, u32: 256 MiB): memset D8, D32, and a kernel of
// 16-byte stores. Event-timed medians after warm-up.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void fill16(uint4* p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, s = (size_t)gridDim.x * blockDim.x;
  for (; i < n; i += s) p[i] = make_uint4(0, 0, 0, 0);
}
template <class F> float med(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 10; i++) f();
  std::vector<float> t;
  for (int i = 0; i < 50; i++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000); }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (size_t bytes : {(size_t)1 << 29, (size_t)1 << 28}) {
    void* p; cudaMalloc(&p, bytes);
    CUdeviceptr d = (CUdeviceptr)p;
    printf("%zu MiB: D8 %.1f µs, D16 %.1f, D32 %.1f, fill16 (grid 8/SM) %.1f, fill16 (n/256 blocks) %.1f\n", bytes >> 20,
      med([&] { cuMemsetD8Async(d, 0, bytes, 0); }),
      med([&] { cuMemsetD16Async(d, 0, bytes / 2, 0); }),
      med([&] { cuMemsetD32Async(d, 0, bytes / 4, 0); }),
      med([&] { fill16<<<sms * 8, 256>>>((uint4*)p, bytes / 16); }),
      med([&] { fill16<<<(unsigned)(bytes / 16 / 256), 256>>>((uint4*)p, bytes / 16); }));
    cudaFree(p);
  }
  printf("err %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
