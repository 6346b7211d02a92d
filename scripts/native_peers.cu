// Native C++ peers for the cudakernels benchmarks, compiled on the GPU machine by the runner:
//   /usr/local/cuda/bin/nvcc -O3 -std=c++17 -arch=sm_XX -o native_peers native_peers.cu
// Usage: ./native_peers [value]...   (sections; all by default). Prints markdown tables.
//   value  a value to the host: cub::DeviceReduce::Sum into a device word, cudaMemcpyAsync into
//          pinned memory on the same stream, cudaStreamSynchronize; host clock per call, median
//          and mean of VALUE_CALLS calls (the bench's "value to the host" section times the same).
// Every CUDA call is checked. A later section adds cuBLAS (sgemv).
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                         cudaGetErrorString(e_));                                              \
            std::exit(1);                                                                      \
        }                                                                                      \
    } while (0)

static const int VALUE_CALLS = 5000;
static const int WARMUP = 100;

struct Stats {
    double median_us, mean_us;
};

static Stats stats(std::vector<double> us) {
    std::sort(us.begin(), us.end());
    double mean = std::accumulate(us.begin(), us.end(), 0.0) / us.size();
    return {us[us.size() / 2], mean};
}

// Host microseconds of each of `calls` calls of f, after WARMUP untimed ones.
template <class F>
static Stats time_calls(F f, int calls) {
    for (int i = 0; i < WARMUP; ++i) f();
    std::vector<double> us(calls);
    for (int i = 0; i < calls; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        us[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    return stats(us);
}

static void value_section(cudaStream_t stream) {
    std::printf("\n### native: value to the host (host clock per call, median and mean of %d)\n\n", VALUE_CALLS);
    std::printf("| what | n | median µs | mean µs | check |\n|---|---|---|---|---|\n");
    for (int p : {12, 20}) {
        size_t n = size_t(1) << p;
        std::vector<float> host(n);
        double want = 0;
        for (size_t i = 0; i < n; ++i) {
            host[i] = float(int(i % 7) - 3);  // small integers: every order sums exactly
            want += host[i];
        }
        float *d_in = nullptr, *d_out = nullptr, *h_out = nullptr;
        CHECK(cudaMalloc(&d_in, n * sizeof(float)));
        CHECK(cudaMalloc(&d_out, sizeof(float)));
        CHECK(cudaMallocHost(&h_out, sizeof(float)));
        CHECK(cudaMemcpyAsync(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
        size_t temp_bytes = 0;
        CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in, d_out, int(n), stream));
        void *temp = nullptr;
        CHECK(cudaMalloc(&temp, temp_bytes));
        CHECK(cudaStreamSynchronize(stream));
        *h_out = NAN;
        auto call = [&] {
            CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, int(n), stream));
            CHECK(cudaMemcpyAsync(h_out, d_out, sizeof(float), cudaMemcpyDeviceToHost, stream));
            CHECK(cudaStreamSynchronize(stream));
        };
        Stats s = time_calls(call, VALUE_CALLS);
        float got = *h_out;
        bool ok = double(got) == want;
        std::printf("| cub::DeviceReduce::Sum + cudaMemcpyAsync (pinned) + cudaStreamSynchronize | 2^%d | %.2f | "
                    "%.2f | %s |\n",
                    p, s.median_us, s.mean_us, ok ? "ok" : "FAIL");
        CHECK(cudaFree(temp));
        CHECK(cudaFreeHost(h_out));
        CHECK(cudaFree(d_out));
        CHECK(cudaFree(d_in));
        if (!ok) {
            std::fprintf(stderr, "native value: got %f, want %f\n", double(got), want);
            std::exit(1);
        }
    }
}

int main(int argc, char **argv) {
    auto wanted = [&](const char *name) {
        if (argc < 2) return true;
        for (int i = 1; i < argc; ++i)
            if (std::strcmp(argv[i], name) == 0) return true;
        return false;
    };
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "value") != 0) {
            std::fprintf(stderr, "unknown section %s; sections: value\n", argv[i]);
            return 2;
        }
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int runtime = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("## Native peers on %s (CUDA runtime %d)\n", prop.name, runtime);
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (wanted("value")) value_section(stream);
    CHECK(cudaStreamDestroy(stream));
    return 0;
}
